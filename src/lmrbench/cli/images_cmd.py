"""``lmrbench images bootstrap|build|dockerfile|list|prune``: base and task images."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from lmrbench.cli.limit_options import TaskFilter

images_app = typer.Typer(help="Docker images of task environments.", no_args_is_help=True)


@images_app.command("bootstrap")
def bootstrap(
    tag: str = typer.Option(None, "--tag", help="Tag of the base image (default lmrbench-base:bookworm)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when the image exists."),
    mirror: str = typer.Option(None, "--mirror", help="Debian mirror URL (default: the tool's own)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the build log."),
) -> None:
    """Build the base image from Debian packages (mmdebstrap or debootstrap), or reuse it when present."""
    from lmrbench.benchmark.sandbox.images import BASE_IMAGE_TAG, bootstrap_base_image
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress(verbose=verbose) as progress:
        res = bootstrap_base_image(tag or BASE_IMAGE_TAG, force=force, mirror=mirror, progress=progress)
    short = res.image_id.removeprefix("sha256:")[:12]
    if res.created:
        typer.echo(f"built {res.tag} ({short}) with {res.tool} in {res.seconds:.0f} s")
    else:
        typer.echo(f"reused {res.tag} ({short}): already present (--force rebuilds)")


@images_app.command("base")
def base_cmd(verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the pull or bootstrap log.")) -> None:
    """Find the base image task images build on: present, else pulled, else bootstrapped; say which."""
    from lmrbench.benchmark.sandbox.base_image import obtain_base_image
    from lmrbench.benchmark.sandbox.images import docker_client
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress(verbose=verbose) as progress:
        choice = obtain_base_image(docker_client(timeout=600), progress=progress)
    typer.echo(choice.line().removeprefix("note: "))


@images_app.command("list")
def list_cmd() -> None:
    """List the local lmrbench images (base and task images)."""
    from lmrbench.benchmark.sandbox.images import list_images

    rows = list_images()
    if not rows:
        typer.echo("no lmrbench images; `lmrbench images bootstrap` makes the base")
    for tag, short, size in rows:
        typer.echo(f"{tag:<60} {short:<12} {size:8.0f} MB")


@images_app.command("build")
def build(
    bench: Annotated[Path, typer.Argument(help="A task set folder, or one task folder.")],
    task: TaskFilter = None,
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Build even when an image of the same inputs exists."
    ),
    base: str = typer.Option(
        None, "--base", help="BASE_IMAGE to build on (default: bootstrapped, else official)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the build logs."),
) -> None:
    """Build (or find) each task's image: tagged by a hash of its Dockerfile, requirements and base."""
    from lmrbench.benchmark.sandbox.docker import DockerRunner
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.core.taskset import load_taskset

    tasks, problems = load_taskset(bench, task or None)
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    runner = DockerRunner(base_image=base)
    with RichProgress(verbose=verbose) as progress:
        for t in tasks:
            t0 = time.monotonic()
            tag = runner.prepare(t, rebuild=rebuild, progress=progress)
            typer.echo(f"{t.name}: {tag} ({time.monotonic() - t0:.1f} s)")
    if problems:
        raise typer.Exit(1)


@images_app.command("dockerfile")
def dockerfile(
    task_dir: Annotated[Path, typer.Argument(help="The task folder.")],
    force: bool = typer.Option(False, "--force", help="Replace a Dockerfile that lmrbench did not write."),
) -> None:
    """Write the task's Dockerfile: build args UID, GID, DIR, BASE_IMAGE; requirements only, no task files."""
    from lmrbench.authoring.dockerfile import write_dockerfile
    from lmrbench.core.taskset import load_task

    t = load_task(task_dir)
    typer.echo(f"wrote {write_dockerfile(t.path, t.info.repo_folder_name, force=force)}")


@images_app.command("prune")
def prune() -> None:
    """Remove the task images (the base image stays); they are rebuilt when next needed.

    Run containers left by a killed lmrbench are removed first, so that they do not keep their images.
    """
    from lmrbench.benchmark.sandbox.containers import remove_stale_containers
    from lmrbench.benchmark.sandbox.images import docker_client, prune_task_images

    client = docker_client()
    stale = remove_stale_containers(client)
    if stale:
        typer.echo(f"removed {len(stale)} containers left by lmrbench processes that are gone")
    removed, busy = prune_task_images(client)
    typer.echo(f"removed {len(removed)} task images")
    for tag in busy:
        typer.echo(f"kept {tag}: in use by a container")


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.add_typer(images_app, name="images")
