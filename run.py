"""`python run.py ...` is the `codeduet` command: a shim over the typer app in agents/cli/app.py."""

from agents.cli.app import app, main

__all__ = ["app", "main"]

if __name__ == "__main__":
    main()
