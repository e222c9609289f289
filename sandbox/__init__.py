"""Workspace and execution: `exec/` (sandboxes), `testing/` (the test runner, reward, grading), `patch/` (the
patch engine); `errorlines` (recognising `Type: message` error lines) and `syntax` are shared by them and by
`skills_store`. Errors are in `errors`, split by who must act."""
