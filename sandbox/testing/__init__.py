"""The core of `run_tests`: argument checks, the runner, reading pytest's reports, status, reward and grading.

`runner.run_tests(workspace, ...) -> TestRunResult` runs a suite in a sandbox (`sandbox.exec`); `grading.grade`
grades a result against FAIL_TO_PASS / PASS_TO_PASS lists the way SWE-bench does.
"""
