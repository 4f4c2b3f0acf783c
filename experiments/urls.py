from django.urls import path

from chaoslm import http  # noqa: F401  (registers the <id:...> converter)
from experiments import views

urlpatterns = [
    path("experiments/", views.experiment_list, name="experiment_list"),
    path("experiments/new/", views.new_experiment, name="experiment_new"),
    path("experiments/estimate/", views.estimate, name="experiment_estimate"),
    path("experiments/<id:pk>/", views.experiment_detail, name="experiment_detail"),
    path("experiments/<id:pk>/export/<str:name>", views.experiment_export, name="experiment_export"),
    path("experiments/<id:pk>/pause/", views.experiment_pause, name="experiment_pause"),
    path("experiments/<id:pk>/resume/", views.experiment_resume, name="experiment_resume"),
    path("experiments/<id:pk>/cancel/", views.experiment_cancel, name="experiment_cancel"),
    path("experiments/<id:pk>/delete/", views.experiment_delete, name="experiment_delete"),
    path("experiments/<id:pk>/visibility/", views.experiment_visibility, name="experiment_visibility"),
    path("experiments/<id:pk>/share/reset/", views.experiment_share_reset, name="experiment_share_reset"),
    path("xs/<str:token>/", views.experiment_share, name="experiment_share"),
    path("xs/<str:token>/export/<str:name>", views.experiment_share_export, name="experiment_share_export"),
]
