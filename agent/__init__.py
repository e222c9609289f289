"""The bundled pydantic-ai agent and the LLM plumbing shared with the LLM distiller."""
