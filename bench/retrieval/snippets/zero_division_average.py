"""Average score of the submissions that passed a filter that removed all of them."""

SUBMISSIONS = [{"user": "ada", "score": 71}, {"user": "grace", "score": 64}]


def average_passing(submissions: list[dict], threshold: int = 80) -> float:
    passing = [s["score"] for s in submissions if s["score"] >= threshold]
    return sum(passing) / len(passing)


print(average_passing(SUBMISSIONS))
