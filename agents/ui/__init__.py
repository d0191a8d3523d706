"""`codeduet ui`: watch, steer and review runs in the browser (agents/ui/app.py)."""
