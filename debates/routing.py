from django.urls import path

from chaoslm import http  # noqa: F401  (registers the <id:...> converter)
from debates.consumers import DebateConsumer
from rooms.consumers import RoomConsumer

websocket_urlpatterns = [
    path("ws/debates/<id:pk>/", DebateConsumer.as_asgi()),
    path("ws/share/<str:token>/", DebateConsumer.as_asgi()),
    path("ws/rooms/<id:pk>/", RoomConsumer.as_asgi()),
    path("ws/room-share/<str:token>/", RoomConsumer.as_asgi()),
]
