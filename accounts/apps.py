from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """A person's own account pages: log in, sign up, this month's spend, API tokens and webhooks. Views and
    templates only: the users are Django's, the tokens and webhooks the API's (api/models.py)."""

    name = "accounts"
