"""The eval harness: rounds of solve -> trajectories -> skills on training tasks, then held-out pass rates with
and without skills, graded SWE-bench style (`harness.run_eval`)."""
