"""Pick the newest log file in a directory that has none."""

import tempfile
from pathlib import Path

logs_dir = Path(tempfile.mkdtemp())
logs = sorted(logs_dir.glob("*.log"))
newest = logs[-1]
print(newest.read_text())
