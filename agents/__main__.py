"""`python -m agents ...` is the `codeduet` command."""

from agents.cli import main

if __name__ == "__main__":
    main()
