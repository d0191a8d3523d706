"""`python run.py ...` is the `codeduet` command: a shim over the typer app in agents/cli.py."""

from agents.cli import app, main

__all__ = ["app", "main"]

if __name__ == "__main__":
    main()
