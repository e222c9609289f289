"""Parse version strings from a changelog; one heading does not match the regex."""

import re

HEADINGS = ["## 1.4.0 (2024-03-01)", "## 1.3.2 (2024-01-15)", "## Unreleased"]


def version_of(heading: str) -> str:
    return re.match(r"## (\d+\.\d+\.\d+)", heading).group(1)


print([version_of(h) for h in HEADINGS])
