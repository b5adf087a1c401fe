"""User-facing tools of tt-hal: the `tt-hal` command line."""
