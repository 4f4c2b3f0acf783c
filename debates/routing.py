from django.urls import path

from debates.consumers import DebateConsumer
from rooms.consumers import RoomConsumer

websocket_urlpatterns = [
    path("ws/debates/<int:pk>/", DebateConsumer.as_asgi()),
    path("ws/share/<str:token>/", DebateConsumer.as_asgi()),
    path("ws/rooms/<int:pk>/", RoomConsumer.as_asgi()),
    path("ws/room-share/<str:token>/", RoomConsumer.as_asgi()),
]
