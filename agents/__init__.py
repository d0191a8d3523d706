"""codeduet: an AssistantAgent writes code, a UserProxyAgent runs it in a hardened Docker sandbox."""

__version__ = "0.1.0"
