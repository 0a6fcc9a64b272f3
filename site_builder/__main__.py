"""`python -m site_builder`: the `belief-site` command."""

if __name__ == "__main__":
    from .cli import console

    console()
