"""The live pages' sockets of the kinds of batch that have no consumer of their own (batches/consumers.py)."""

from django.urls import path

from batches.consumers import BatchConsumer

# After every app's own routes (config/routing.py): a kind with its own consumer is served by it.
websocket_urlpatterns = [
    path("ws/<str:model>s/<int:pk>/", BatchConsumer.as_asgi()),
    path("ws/<str:model>-share/<str:token>/", BatchConsumer.as_asgi()),
]
