"""How work reaches a crowd and is paid (providers, postings, payments). See DESIGN.md."""
