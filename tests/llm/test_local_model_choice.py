"""CHAOSLM_LOCAL_MODEL: which GGUF the embedded model serves, the llama.cpp command line for it, and the plain
message a bad value gets. Fast: nothing here runs llama.cpp (tests/llm/test_local_model.py serves the shipped
SmolLM2 given as a path). The Hugging Face form cannot be fetched here (no internet): its command line is
checked, and the cached copy an earlier fetch leaves is used without the network."""

import socket

import pytest
from django.core.management import CommandError, call_command

from chaoslm.llm import local_model
from chaoslm.llm.endpoints import default_endpoint

QWEN = "Qwen/Qwen2.5-1.5B-Instruct-GGUF:qwen2.5-1.5b-instruct-q4_k_m.gguf"


@pytest.fixture
def embedded(settings):
    """No endpoint configured, so the embedded model; on a port nothing listens on."""
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        settings.CHAOSLM_LOCAL_MODEL_PORT = sock.getsockname()[1]
    yield settings
    local_model.log_path().unlink(missing_ok=True)


def a_gguf(path):
    path.write_bytes(b"GGUF" + bytes(60))  # the magic llama.cpp checks first; enough to be told apart
    return path


def model_arguments(argv):
    """The arguments that name the model, and its alias, from a server command line."""
    start = argv.index("--model")
    end = argv.index("--host")
    return argv[start:end]


def test_the_setting_names_the_shipped_model_a_file_or_a_file_of_a_hugging_face_repo(tmp_path):
    shipped = local_model.chosen("")
    assert shipped.shipped and shipped.alias == "smollm2-135m" and shipped.label == "SmolLM2-135M"

    path = local_model.chosen("/models/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf")
    assert (path.repo, path.file) == ("", "/models/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf")
    assert path.alias == "qwen2.5-1.5b-instruct-q4_k_m" and path.label == "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"

    hub = local_model.chosen(QWEN)
    assert (hub.repo, hub.file) == ("Qwen/Qwen2.5-1.5B-Instruct-GGUF", "qwen2.5-1.5b-instruct-q4_k_m.gguf")
    assert hub.alias == "qwen2.5-1.5b-instruct-q4_k_m" and hub.label == QWEN
    # A glob, as llama.cpp's loader takes it: the alias comes from the repo.
    assert local_model.chosen("bartowski/Qwen2.5-1.5B-Instruct-GGUF:*Q4_K_M.gguf").alias == "qwen2.5-1.5b-instruct-gguf"
    # A file that exists is a file, even where its name reads like a repo and file.
    (tmp_path / "owner").mkdir()
    odd = a_gguf(tmp_path / "owner" / "repo:model.gguf")
    assert local_model.chosen(str(odd)).repo == ""


def test_a_path_is_served_by_its_file_under_its_own_name(embedded, tmp_path):
    embedded.CHAOSLM_LOCAL_MODEL = str(a_gguf(tmp_path / "My-Model.Q4_K_M.gguf"))
    argv = local_model.command()
    assert model_arguments(argv) == [
        "--model",
        str(tmp_path / "My-Model.Q4_K_M.gguf"),
        "--model_alias",
        "my-model.q4_k_m",
    ]
    endpoint = default_endpoint()
    assert (endpoint.name, endpoint.model, endpoint.slots) == ("local My-Model.Q4_K_M.gguf", "my-model.q4_k_m", 1)


def test_the_shipped_model_is_served_when_the_setting_is_empty(embedded):
    embedded.CHAOSLM_LOCAL_MODEL = ""
    try:
        path = local_model.model_path()
    except local_model.LocalModelMissing:
        pytest.skip("the embedded model is not installed")
    assert model_arguments(local_model.command()) == ["--model", str(path), "--model_alias", "smollm2-135m"]
    assert default_endpoint().name == "local SmolLM2-135M"


def threads(argv):
    return int(argv[argv.index("--n_threads") + 1])


def test_the_shipped_model_writes_with_one_thread_another_with_half_the_cores_unless_set(
    embedded, tmp_path, monkeypatch
):
    """Two threads on a busy two-core machine made SmolLM2 60 times slower than one (they wait for each other)."""
    monkeypatch.setattr(local_model.os, "cpu_count", lambda: 8)
    embedded.CHAOSLM_LOCAL_MODEL_THREADS = 0
    assert local_model.chosen("").threads == 1
    embedded.CHAOSLM_LOCAL_MODEL = str(a_gguf(tmp_path / "big.gguf"))
    assert threads(local_model.command()) == 4
    monkeypatch.setattr(local_model.os, "cpu_count", lambda: None)  # unknown: two cores assumed
    assert threads(local_model.command()) == 1
    embedded.CHAOSLM_LOCAL_MODEL_THREADS = 3
    assert threads(local_model.command()) == 3
    assert local_model.chosen("").threads == 3


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda tmp: tmp / "nowhere.gguf", "which does not exist. Set CHAOSLM_LOCAL_MODEL to the path of a .gguf file"),
        (lambda tmp: tmp, "which is a directory, not a file."),
        (
            lambda tmp: (tmp / "model.safetensors").write_bytes(b"\x00" * 64) and tmp / "model.safetensors",
            "which is not a GGUF file (llama.cpp serves GGUF files only",
        ),
    ],
    ids=["missing", "directory", "not-gguf"],
)
def test_a_bad_path_is_refused_in_plain_words_by_both_commands(embedded, tmp_path, make, says):
    bad = make(tmp_path)
    embedded.CHAOSLM_LOCAL_MODEL = str(bad)
    for command in (["local_model"], ["serve", "127.0.0.1:0"]):
        with pytest.raises(CommandError) as error:
            call_command(*command)
        assert str(error.value).startswith(f"CHAOSLM_LOCAL_MODEL names {bad}, ")
        assert says in str(error.value)


def test_a_hugging_face_file_is_fetched_by_llama_cpps_loader(embedded, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    embedded.CHAOSLM_LOCAL_MODEL = QWEN
    assert model_arguments(local_model.command()) == [
        "--model",
        "qwen2.5-1.5b-instruct-q4_k_m.gguf",
        "--hf_model_repo_id",
        "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        "--model_alias",
        "qwen2.5-1.5b-instruct-q4_k_m",
    ]
    assert local_model.chosen().start_wait > 600  # the first start downloads about a gigabyte


def test_a_hugging_face_file_fetched_before_is_served_from_the_cache_without_the_network(
    embedded, tmp_path, monkeypatch
):
    cache = tmp_path / "hf"
    snapshot = cache / "models--Qwen--Qwen2.5-1.5B-Instruct-GGUF" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    cached = a_gguf(snapshot / "qwen2.5-1.5b-instruct-q4_k_m.gguf")
    a_gguf(snapshot / "qwen2.5-1.5b-instruct-q8_0.gguf")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    embedded.CHAOSLM_LOCAL_MODEL = QWEN
    assert model_arguments(local_model.command()) == [
        "--model",
        str(cached),
        "--model_alias",
        "qwen2.5-1.5b-instruct-q4_k_m",
    ]
    embedded.CHAOSLM_LOCAL_MODEL = "Qwen/Qwen2.5-1.5B-Instruct-GGUF:*q8_0.gguf"
    assert model_arguments(local_model.command())[1] == str(snapshot / "qwen2.5-1.5b-instruct-q8_0.gguf")


def test_the_shipped_model_is_asked_with_a_repetition_penalty_its_own_template_and_stop_sequences(embedded, tmp_path):
    argv = local_model.command()
    assert argv[argv.index("--repeat_penalty") + 1] == "1.15"
    template = argv[argv.index("--chat_template") + 1]
    # ChatML as SmolLM2 was trained on, without the GGUF's made-up system prompt ("named SmolLM").
    assert template.startswith("{% for message in messages %}<|im_start|>") and "SmolLM" not in template
    assert default_endpoint().stop == ("<|im_start|>", "<|im_end|>", "\nUser:", "\nuser:", "\nAssistant:", "\n\n\n")
    # Another GGUF has a template of its own and is asked as it is.
    embedded.CHAOSLM_LOCAL_MODEL = str(a_gguf(tmp_path / "Other.gguf"))
    argv = local_model.command()
    assert "--repeat_penalty" not in argv and "--chat_template" not in argv
    assert default_endpoint().stop == ()
