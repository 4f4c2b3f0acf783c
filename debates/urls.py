from django.urls import path, register_converter

from chaoslm import http  # noqa: F401  (registers the <id:...> converter)
from debates import format_views, views


class ExportKind:
    """The transcript formats that exist. Any other name after "export." matches no page: a 404."""

    regex = "md|json"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ExportKind, "export")

urlpatterns = [
    path("", views.home, name="home"),
    path("local-model/status/", views.local_model_status, name="local_model_status"),
    path("debates/new/", views.new_debate, name="debate_new"),
    path("personas/prompt/", views.persona_prompt, name="persona_prompt"),
    path("formats/", format_views.format_list, name="format_list"),
    path("formats/<slug:name>/", format_views.format_detail, name="format_detail"),
    path("debates/<id:pk>/", views.debate_detail, name="debate_detail"),
    path("debates/<id:pk>/export.<export:kind>", views.debate_export, name="debate_export"),
    path("debates/<id:pk>/end/", views.debate_end, name="debate_end"),
    path("debates/<id:pk>/start-now/", views.debate_start_now, name="debate_start_now"),
    path("debates/<id:pk>/speak/", views.debate_speak, name="debate_speak"),
    path("debates/<id:pk>/retry/", views.debate_retry, name="debate_retry"),
    path("debates/<id:pk>/visibility/", views.debate_visibility, name="debate_visibility"),
    path("debates/<id:pk>/thinking/", views.debate_thinking, name="debate_thinking"),
    path("debates/<id:pk>/share/reset/", views.debate_share_reset, name="debate_share_reset"),
    path("debates/<id:pk>/delete/", views.debate_delete, name="debate_delete"),
    path("s/<str:token>/", views.debate_share, name="debate_share"),
    path("s/<str:token>/export.<export:kind>", views.debate_share_export, name="debate_share_export"),
]
