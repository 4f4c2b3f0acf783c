from django.urls import path

from rooms.consumers import RoomConsumer

websocket_urlpatterns = [
    path("ws/rooms/<int:pk>/", RoomConsumer.as_asgi()),
    path("ws/room-share/<str:token>/", RoomConsumer.as_asgi()),
]
