"""Run a deploy script that was checked out without its execute bit."""

import subprocess
from pathlib import Path

script = Path("deploy.sh")
script.write_text("#!/bin/sh\necho deploying\n")
script.chmod(0o644)
subprocess.run(["./deploy.sh"], check=True)
