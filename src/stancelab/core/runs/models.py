"""Model strings and model roles as the CLI accepts them."""

from __future__ import annotations

from collections.abc import Iterable

from stancelab.core.embedded.model import EMBEDDED_MODEL, EMBEDDED_PROVIDER
from stancelab.core.errors import StancelabError
from stancelab.core.inspect_private import model_provider_names

EMBEDDED_ALIASES = {"embedded", EMBEDDED_PROVIDER + "/", EMBEDDED_MODEL}


def resolve_model(name: str | None) -> str:
    """Map `embedded` (or nothing) to the embedded model; pass any Inspect model string through."""
    if name is None or not name.strip() or name.strip() in EMBEDDED_ALIASES:
        return EMBEDDED_MODEL
    name = name.strip()
    if "/" not in name:
        raise StancelabError(
            f"Model '{name}' is not an Inspect model string (provider/model, e.g. "
            "openai/gpt-4o-mini, openai-api/<name>/<model>, vllm/..., ollama/...) "
            "and not 'embedded'."
        )
    return name


def resolve_models(names: Iterable[str] | None) -> list[str]:
    """Resolve a repeated --model option; the embedded model when none is given."""
    resolved = [resolve_model(name) for name in (names or [])]
    unique = list(dict.fromkeys(resolved))
    return unique or [EMBEDDED_MODEL]


def known_providers() -> set[str]:
    """The model providers Inspect can start (its own, stancelab's and any installed package's)."""
    return model_provider_names()


def check_providers(models: Iterable[object]) -> None:
    """Every model named by a string has a provider Inspect knows (checked before any call);
    else an error naming the model. Model objects are taken as they are."""
    named = [model for model in models if isinstance(model, str)]
    if not named:
        return
    providers = known_providers()
    for model in named:
        if model.split("/")[0] not in providers:
            raise StancelabError(
                f"Model '{model}': Inspect knows no provider '{model.split('/')[0]}' "
                "(e.g. openai/..., anthropic/..., openai-api/<name>/..., vllm/..., ollama/..., embedded)."
            )


def parse_roles(assignments: Iterable[str] | None, allowed: Iterable[str]) -> dict[str, str]:
    """Parse `ROLE=MODEL` strings, checking each role is one the probe uses."""
    allowed_roles = set(allowed)
    roles: dict[str, str] = {}
    for assignment in assignments or []:
        role, separator, model = assignment.partition("=")
        role = role.strip()
        if not separator or not role or not model.strip():
            raise StancelabError(f"--role expects ROLE=MODEL, got '{assignment}'.")
        if role not in allowed_roles:
            known = ", ".join(sorted(allowed_roles)) or "none"
            raise StancelabError(f"Unknown role '{role}' for this probe (roles: {known}).")
        roles[role] = resolve_model(model)
    return roles
