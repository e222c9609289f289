"""Skill and trajectory storage: models, stores, search, distillation, redaction, import/export."""
