"""Build a status line with + and an int."""

processed = 42
print("Processed: " + processed + " files")
