from django.urls import path

from rooms import views

urlpatterns = [
    path("rooms/", views.room_list, name="room_list"),
    path("rooms/<int:pk>/", views.room_detail, name="room_detail"),
    path("rooms/<int:pk>/say/", views.room_say, name="room_say"),
    path("rooms/<int:pk>/mode/", views.room_mode, name="room_mode"),
    path("rooms/<int:pk>/keep/", views.room_keep, name="room_keep"),
    path("rooms/<int:pk>/settings/", views.room_settings, name="room_settings"),
    path("rooms/<int:pk>/agents/", views.room_add_agent, name="room_add_agent"),
    path("rooms/<int:pk>/agents/<int:agent_id>/<str:what>/", views.room_agent, name="room_agent"),
    path("rooms/<int:pk>/messages/<int:message_id>/toggle/", views.room_toggle_message, name="room_toggle_message"),
    path("r/<str:token>/", views.room_share, name="room_share"),
]
