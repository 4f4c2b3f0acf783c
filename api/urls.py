from django.urls import path, re_path

from api import views
from api.main import api
from api.problems import unknown

urlpatterns = [
    path("api/v1/", api.urls),
    re_path(r"^api/v1/(?P<rest>.*)$", unknown),
    path("account/tokens/", views.tokens_page, name="api_tokens"),
    path("account/tokens/<id:pk>/revoke/", views.revoke_token, name="api_token_revoke"),
    path("account/webhooks/", views.webhooks_page, name="api_webhooks"),
    path("account/webhooks/<id:pk>/delete/", views.delete_webhook, name="api_webhook_delete"),
    path("account/deliveries/<id:pk>/redeliver/", views.redeliver, name="api_redeliver"),
]
