"""``lmrbench image bootstrap|build|dockerfile|list|prune``: base and task images."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from lmrbench.cli.grammar import LmrGroup
from lmrbench.cli.limit_options import TaskFilter
from lmrbench.cli.output import Format, check_format, emit

images_app = typer.Typer(cls=LmrGroup, help="Docker images of task environments.", no_args_is_help=True)


@images_app.command("bootstrap")
def bootstrap(
    tag: str = typer.Option(None, "--tag", help="Tag of the base image (default lmrbench-base:bookworm)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when the image exists."),
    mirror: str = typer.Option(None, "--mirror", help="Debian mirror URL (default: the tool's own)."),
) -> None:
    """Build the base image from Debian packages (mmdebstrap or debootstrap), or reuse it when present."""
    from lmrbench.benchmark.sandbox.environments.images import BASE_IMAGE_TAG, bootstrap_base_image
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress() as progress:
        res = bootstrap_base_image(tag or BASE_IMAGE_TAG, force=force, mirror=mirror, progress=progress)
    short = res.image_id.removeprefix("sha256:")[:12]
    if res.created:
        typer.echo(f"built {res.tag} ({short}) with {res.tool} in {res.seconds:.0f} s")
    else:
        typer.echo(f"reused {res.tag} ({short}): already present (--force rebuilds)")


@images_app.command("base")
def base_cmd() -> None:
    """Find the base image task images build on: present, else pulled, else bootstrapped; say which."""
    from lmrbench.benchmark.sandbox.environments.base_image import obtain_base_image
    from lmrbench.benchmark.sandbox.environments.images import docker_client
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress() as progress:
        choice = obtain_base_image(docker_client(timeout=600), progress=progress)
    typer.echo(choice.line().removeprefix("note: "))


@images_app.command("list")
def list_cmd(fmt: Format = "text") -> None:
    """List lmrbench's images: the base, the framework layers (and the tasks that share each), the task images
    (and the bytes each adds to its parent)."""
    from dataclasses import asdict

    from lmrbench.benchmark.sandbox.environments.images import docker_client
    from lmrbench.benchmark.sandbox.environments.inventory import inventory

    check_format(fmt)
    rows = inventory(docker_client())
    if fmt == "json":
        emit(fmt, {"images": [asdict(r) for r in rows]})
        return
    if not rows:
        typer.echo("no lmrbench images; `lmrbench image bootstrap` makes the base")
    for r in rows:
        line = f"{r.kind:<9} {r.tag:<60} {r.short_id:<12} {r.size / 1e6:9,.0f} MB"
        if r.parent:
            line += f"  +{r.own / 1e6:,.0f} MB on {r.parent}"
        if r.kind == "framework":
            shared = ", ".join(sorted(r.users)) or "no task image"
            line += f"  [{r.framework}] shared by {len(r.users)}: {shared}"
        typer.echo(line)


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
    torch_wheels: Annotated[Path | None, typer.Option(
        "--torch-wheels", help="A folder of torch wheels (e.g. CPU-only builds) to take torch from "
        "(also $LMRBENCH_TORCH_WHEELS).")] = None,
    torch_index: Annotated[str | None, typer.Option(
        "--torch-index", help="An extra index to take torch from, e.g. https://download.pytorch.org/whl/cpu "
        "(also $LMRBENCH_TORCH_INDEX).")] = None,
) -> None:
    """Build (or find) each task's image: a framework layer (torch) shared by the tasks that pin it, then the
    task's own layer; tagged by a hash of what each is built from."""
    from lmrbench.benchmark.sandbox.environments.layers import TorchSource
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.core.taskset import load_taskset

    tasks, problems = load_taskset(bench, task or None)
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    env = TorchSource.from_env()
    source = TorchSource(torch_wheels or env.wheels, torch_index or env.index)
    runner = DockerRunner(base_image=base, torch=source)
    with RichProgress() as progress:
        for t in tasks:
            t0 = time.monotonic()
            tag = runner.prepare(t, rebuild=rebuild, progress=progress)
            typer.echo(f"{t.name}: {tag} ({time.monotonic() - t0:.1f} s)")
    if problems:
        raise typer.Exit(1)


@images_app.command("dockerfile")
def dockerfile(
    task_dir: Annotated[Path, typer.Argument(metavar="TASK", help="The task folder.")],
    force: bool = typer.Option(False, "--force", help="Replace a Dockerfile that lmrbench did not write."),
) -> None:
    """Write the task's Dockerfile: build args UID, GID, DIR, BASE_IMAGE; the environment only, no task files.
    With --force, what the task's own Dockerfile installs is carried (each step said), or the step that cannot be
    is named and nothing is written."""
    from lmrbench.authoring.check.dockerfile import write_dockerfile
    from lmrbench.core.taskset import load_task

    t = load_task(task_dir)
    path, said = write_dockerfile(t.path, t.info.repo_folder_name, force=force)
    for line in said:
        typer.echo(line)
    typer.echo(f"wrote {path}")


@images_app.command("prune")
def prune(
    bench: Annotated[Path | None, typer.Argument(
        help="Keep what this task set (or task) uses: each task's newest image and its framework layer.")] = None,
) -> None:
    """Remove task images and framework layers (the base image stays); they are rebuilt when next needed.

    Run containers left by a killed lmrbench are removed first, so that they do not keep their images.
    """
    from lmrbench.benchmark.sandbox.environments.containers import remove_stale_containers
    from lmrbench.benchmark.sandbox.environments.images import docker_client
    from lmrbench.benchmark.sandbox.environments.inventory import inventory, keep_for, prune_images
    from lmrbench.core.taskset import load_taskset

    client = docker_client()
    stale = remove_stale_containers(client)
    if stale:
        typer.echo(f"removed {len(stale)} containers left by lmrbench processes that are gone")
    keep: set[str] = set()
    if bench is not None:
        tasks, _ = load_taskset(bench)
        keep = keep_for(inventory(client), {t.name for t in tasks})
    removed, busy = prune_images(client, keep)
    typer.echo(f"removed {len(removed)} images" + (f"; kept {len(keep)} that {bench} uses" if bench else ""))
    for tag in sorted(keep):
        typer.echo(f"kept {tag}")
    for tag in busy:
        typer.echo(f"kept {tag}: in use by a container")


@images_app.command("try")
def try_cmd(
    task_dir: Annotated[Path, typer.Argument(metavar="TASK", help="The task folder.")],
    requirements: Annotated[list[str], typer.Argument(help="Requirement lines to try, e.g. 'peft==0.10.0'.")],
    command: str = typer.Option("", "--command", help="A command to run after the install, as the image's user, in the "
                            "task's masked repository (read-only; e.g. \"python -c 'import trl, model'\")."),
    write: bool = typer.Option(False, "--write", help="When it works, save the change into the task's "
                               "requirements.txt."),
) -> None:
    """Try a requirement change in a throwaway container of the task's last built image, in seconds (only new
    wheels are downloaded; nothing is kept). A full build is `lmrbench image build`."""
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner
    from lmrbench.benchmark.sandbox.running.try_requirements import try_requirements, write_requirements
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.core.taskset import load_task

    t = load_task(task_dir)
    with RichProgress() as progress:
        res = try_requirements(DockerRunner(), t, requirements, command=command, progress=progress)
    if progress.verbose or not res.ok:
        typer.echo(res.output.rstrip()[-4000:])
    if not res.ok:
        typer.echo(f"error: {res.headline} ({res.seconds:.1f} s, in {res.image})", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok: {res.headline} ({res.seconds:.1f} s)")
    if write:
        typer.echo(f"wrote {write_requirements(t, requirements)}")


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.add_typer(images_app, name="image")
