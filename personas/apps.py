from django.apps import AppConfig


class PersonasConfig(AppConfig):
    name = "personas"
    label = "personas"
    verbose_name = "Personas and providers"

    def ready(self) -> None:
        from chaoslm import costs
        from personas.models import Budget

        # The core's budget rules (chaoslm/costs.py) read a user's own budget from here: the core imports no app.
        costs.register_budget(lambda user: Budget.objects.filter(user=user).first())
