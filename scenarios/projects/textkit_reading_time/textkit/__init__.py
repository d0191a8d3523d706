"""textkit: small text helpers used by the blog engine."""

__version__ = "0.3.0"
