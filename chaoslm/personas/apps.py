from django.apps import AppConfig


class PersonasConfig(AppConfig):
    name = "chaoslm.personas"
    label = "personas"
    verbose_name = "Personas and providers"
