"""LLM plumbing: turning a model string (`openai:gpt-4o`, `anthropic:...`, a gateway model) into a pydantic-ai
model, used by the LLM distiller. The bundled agent and its eval harness are not built yet."""
