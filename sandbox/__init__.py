"""Workspace execution: sandboxes, the patch engine, the test runner and its reward."""
