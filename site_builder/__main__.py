"""`python -m site_builder`: the `belief-site` command."""

from .cli import console

console()
