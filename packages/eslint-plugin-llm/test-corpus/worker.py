# model = "groq/llama-3.1-8b-instant"
MODEL = "ollama/gemma3:12b"
FALLBACK = 'groq/llama-3.3-70b-versatile'
URL = "https://github.com/ollama/ollama"
LABEL = "# not a comment"; VISION = 'google/gemini-2.0-flash'


def pick(name):
    return f"ollama/{name}"


DOC = """Uses ollama/gemma3:4b when local."""
