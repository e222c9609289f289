"""`local:` models: a GGUF model shipped as PyPI packages, served by llama.cpp's OpenAI-compatible server on a free
loopback port for as long as this process needs it (`skillbank[local]`)."""
