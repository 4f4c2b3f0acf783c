from batches import views as batch_views
from comparisons import kind, views
from comparisons.forms import NewComparisonForm

urlpatterns = batch_views.urlpatterns(
    kind.COMPARISON,
    share="cs",
    form=NewComparisonForm,
    page=views.page,
    exports=views.EXPORTS,
    deleted="Comparison deleted, with its runs' debates.",
)
