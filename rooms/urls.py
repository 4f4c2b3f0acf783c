from django.urls import path

from chaoslm import http  # noqa: F401  (registers the <id:...> converter)
from rooms import views

urlpatterns = [
    path("rooms/", views.room_list, name="room_list"),
    path("rooms/<id:pk>/", views.room_detail, name="room_detail"),
    path("rooms/<id:pk>/say/", views.room_say, name="room_say"),
    path("rooms/<id:pk>/mode/", views.room_mode, name="room_mode"),
    path("rooms/<id:pk>/interrupt/", views.room_interrupt, name="room_interrupt"),
    path("rooms/<id:pk>/keep/", views.room_keep, name="room_keep"),
    path("rooms/<id:pk>/settings/", views.room_settings, name="room_settings"),
    path("rooms/<id:pk>/turn-order/", views.room_turn_order, name="room_turn_order"),
    path("rooms/<id:pk>/agent-settings/", views.room_agent_settings, name="room_agent_settings"),
    path("rooms/<id:pk>/memory/", views.room_memory, name="room_memory"),
    path("rooms/<id:pk>/template/", views.room_save_template, name="room_save_template"),
    path("rooms/<id:pk>/agents/", views.room_add_agent, name="room_add_agent"),
    path("rooms/<id:pk>/agents/<id:agent_id>/pause/", views.room_agent_pause, name="room_agent_pause"),
    path("rooms/<id:pk>/agents/<id:agent_id>/remove/", views.room_agent_remove, name="room_agent_remove"),
    path("rooms/<id:pk>/agents/<id:agent_id>/next/", views.room_agent_next, name="room_agent_next"),
    path("rooms/<id:pk>/agents/<id:agent_id>/earlier/", views.room_agent_earlier, name="room_agent_earlier"),
    path("rooms/<id:pk>/agents/<id:agent_id>/retry/", views.room_agent_retry, name="room_agent_retry"),
    path("rooms/<id:pk>/messages/<id:message_id>/toggle/", views.room_toggle_message, name="room_toggle_message"),
    path("rooms/<id:pk>/visibility/", views.room_visibility, name="room_visibility"),
    path("rooms/<id:pk>/share/reset/", views.room_share_reset, name="room_share_reset"),
    path("rooms/<id:pk>/delete/", views.room_delete, name="room_delete"),
    path("rooms/<id:pk>/export.md", views.room_export, {"kind": "md"}, name="room_export_md"),
    path("rooms/<id:pk>/export.json", views.room_export, {"kind": "json"}, name="room_export_json"),
    path("r/<str:token>/", views.room_share, name="room_share"),
    path("r/<str:token>/export.md", views.room_share_export, {"kind": "md"}, name="room_share_export_md"),
    path("r/<str:token>/export.json", views.room_share_export, {"kind": "json"}, name="room_share_export_json"),
]
