"""Mixed indentation after pasting code."""


def parse(lines):
    result = []
    for line in lines:
        if line.strip():
            result.append(line)
      return result
