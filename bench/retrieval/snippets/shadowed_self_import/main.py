import random

print(random.choice(["heads", "tails"]))
