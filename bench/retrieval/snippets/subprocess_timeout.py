"""A child process that waits longer than the timeout allows."""

import subprocess
import sys

subprocess.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1, check=True)
