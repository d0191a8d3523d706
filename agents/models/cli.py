"""`codeduet model`: get, serve and inspect the embedded local model."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from agents.cli.common import cli_errors, console, install_signal_handlers
from agents.loop.errors import ModelUnavailable
from agents.loop.extras import require
from agents.record.paths import models_table

model_app = typer.Typer(no_args_is_help=True, help="Get and inspect the embedded local model.")


@model_app.command("pull")
def model_pull(path: Optional[Path] = typer.Option(None, help="Target file (default: the cache folder).")) -> None:
    """Download/assemble and verify the local model."""
    from agents.models.download import pull_model

    with cli_errors():
        console.print(f"model ready: {pull_model(path, console=console)}")


@model_app.command("serve")
def model_serve(port: int = typer.Option(8080, help="Port to listen on."),
                host: str = typer.Option("127.0.0.1", help="Address to listen on (loopback by default)."),
                n_ctx: int = typer.Option(8192, "--n-ctx", help="Context window."),
                n_threads: Optional[int] = typer.Option(None, "--n-threads", help="CPU threads (default: all)."),
                ) -> None:
    """Serve the local model with llama.cpp's OpenAI-compatible server; use it with --model llamacpp-server."""
    from agents.models.download import pull_model
    from agents.models.server import MODEL_ALIAS, LlamaServer

    install_signal_handlers()
    with cli_errors():
        require("server", "codeduet model serve")  # before the model is fetched
        server = LlamaServer(pull_model(console=console), host, port, n_ctx, n_threads)
        try:
            with console.status(f"starting llama.cpp's server at {server.base_url}…"):
                server.start()
                server.wait_ready()
            console.print(f"serving {MODEL_ALIAS} at {server.base_url} (its log: {server.log}); use it with "
                          "--model llamacpp-server; Ctrl-C stops it", soft_wrap=True)
            code = server.process.wait()
        except KeyboardInterrupt:
            server.stop()
            console.print("server stopped")
            return
        finally:
            server.stop()
        raise ModelUnavailable(f"llama.cpp's server exited with code {code}: see {server.log}")


@model_app.command("status")
def model_status() -> None:
    """The model table in use; the local model's path, size, hash check and llama.cpp build."""
    from agents.models.download import model_status as status

    with cli_errors():
        console.print(f"model table: {models_table()}", soft_wrap=True)
        for key, value in status().items():
            console.print(f"{key}: {value}", soft_wrap=True)
