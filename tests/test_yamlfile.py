"""The YAML loader every file format uses: line numbers kept, a declared shape checked."""

import pytest
import yaml

from routerlab import yamlfile
from routerlab.errors import DataFormatError, ValueRefused
from routerlab.yamlfile import ListOf, MapOf, Shape


def _even(v):
    if not (isinstance(v, int) and v % 2 == 0):
        raise ValueRefused("an even number")


HOST = Shape({"ssh": str, "cpu": int, "ratio": float, "tags": (ListOf(str), None)}, required=("ssh",))
SHAPE = Shape({"hosts": MapOf(HOST, min=1, each="host {key}"),
               "cases": ListOf(Shape({"send": str, "size": _even}, required=("send",)), min=1, each="case {n}"),
               "note": (str, None)},
              required=("hosts",))
GOOD = """\
hosts:
  a:
    ssh: lab@a
    cpu: 2
    ratio: 1
  b: {ssh: lab@b, tags: [x, y]}
cases:
  - send: udp
  - {send: tcp, size: 4}
"""


def refusal(text: str, spec=SHAPE, tmp_path=None) -> DataFormatError:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(DataFormatError) as e:
        yamlfile.check(yamlfile.load(path), spec, path)
    assert str(e.value).startswith(f"{path}:{e.value.line}: ") and "\n" not in str(e.value)
    return e.value


def test_a_good_file_loads_as_plain_data_that_knows_its_lines(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text(GOOD)
    doc = yamlfile.load(path)
    yamlfile.check(doc, SHAPE, path)
    assert doc == yaml.safe_load(GOOD) and isinstance(doc, dict) and isinstance(doc["cases"], list)
    assert yamlfile.line_of(doc) == 1 and yamlfile.line_of(doc["hosts"], "b") == 6
    assert yamlfile.line_of(doc["hosts"]["a"], "cpu") == 4 and yamlfile.line_of(doc["cases"], 1) == 9
    assert yamlfile.line_of({"plain": 1}, "plain") is None
    assert yaml.safe_load(yaml.safe_dump(doc)) == doc  # what was read writes back as plain YAML


def test_an_unknown_key_names_its_own_line(tmp_path):
    e = refusal(GOOD.replace("    cpu: 2\n", "    cpu: 2\n    cpus: 3\n"), tmp_path=tmp_path)
    assert e.line == 5 and e.message == "host a: unknown key 'cpus'; allowed: ssh, cpu, ratio, tags"
    e = refusal(GOOD + "hostz: {}\n", tmp_path=tmp_path)
    assert e.line == 10 and e.message == "the file: unknown key 'hostz'; allowed: hosts, cases, note"


def test_a_wrong_type_names_the_line_of_the_value_and_what_is_allowed(tmp_path):
    e = refusal(GOOD.replace("cpu: 2", "cpu: two"), tmp_path=tmp_path)
    assert (e.line, e.message) == (4, "host a: cpu: 'two' is not allowed; allowed: a whole number")
    e = refusal(GOOD.replace("cpu: 2", "cpu: true"), tmp_path=tmp_path)  # true is no number
    assert (e.line, e.message) == (4, "host a: cpu: True is not allowed; allowed: a whole number")
    e = refusal(GOOD.replace("tags: [x, y]", "tags: x"), tmp_path=tmp_path)
    assert (e.line, e.message) == (6, "host b: tags: 'x' is not allowed; allowed: a list, each a text or nothing")
    e = refusal(GOOD.replace("size: 4", "size: 3"), tmp_path=tmp_path)  # a function's check says what it takes
    assert (e.line, e.message) == (9, "case 2: size: 3 is not allowed; allowed: an even number")
    e = refusal("- a list\n", tmp_path=tmp_path)
    assert (e.line, e.message) == (1, "the file: ['a list'] is not allowed; allowed: a mapping with the keys "
                                      "hosts, cases, note")
    for empty in ("", "# nothing but a comment\n"):
        e = refusal(empty, tmp_path=tmp_path)
        assert e.message == "the file: it is empty; it must be a mapping with the keys hosts, cases, note", empty


def test_a_missing_key_names_the_line_of_its_mapping(tmp_path):
    e = refusal(GOOD.replace("  b: {ssh: lab@b, tags: [x, y]}", "  b: {tags: [x, y]}"), tmp_path=tmp_path)
    assert (e.line, e.message) == (6, "host b: missing key(s) ssh; required: ssh")
    e = refusal("note: hello\n", tmp_path=tmp_path)
    assert (e.line, e.message) == (1, "the file: missing key(s) hosts; required: hosts")


def test_a_nested_list_item_names_its_own_line(tmp_path):
    e = refusal(GOOD.replace("tags: [x, y]", "tags: [x,\n      [y]]"), tmp_path=tmp_path)
    assert (e.line, e.message) == (7, "host b: tags: item 2: ['y'] is not allowed; allowed: a text")
    e = refusal(GOOD + "  - size: 2\n", tmp_path=tmp_path)
    assert (e.line, e.message) == (10, "case 3: missing key(s) send; required: send")
    e = refusal(GOOD.replace("cases:\n  - send: udp\n  - {send: tcp, size: 4}\n", "cases: []\n"), tmp_path=tmp_path)
    assert (e.line, e.message) == (7, "cases: [] is not allowed; allowed: a list of at least 1 item, each a mapping "
                                      "with the keys send, size")


def test_a_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text("hosts:\n  a: {ssh: lab@a\n")
    with pytest.raises(DataFormatError) as e:
        yamlfile.load(path)
    assert (e.value.source, e.value.line) == (str(path), 3)
    assert e.value.message == "not valid YAML: expected ',' or '}', but got '<stream end>' (while parsing a flow mapping)"
    path.write_bytes(b"note: \xff\n")
    with pytest.raises(DataFormatError, match=rf"^{path}: not UTF-8 text"):
        yamlfile.load(path)


def test_a_file_that_cannot_be_read_is_named_with_why(tmp_path):
    with pytest.raises(DataFormatError, match=rf"^{tmp_path}/none.yaml: cannot read the testbed file "
                                              r"\(No such file or directory\)$"):
        yamlfile.load(tmp_path / "none.yaml", "the testbed file")


def test_a_plain_dict_is_checked_naming_the_line_it_is_given():
    with pytest.raises(DataFormatError) as e:
        yamlfile.check({"ssh": "lab@a", "cpu": "x"}, HOST, "recipes.yaml", "host a", line=12)
    assert str(e.value) == "recipes.yaml:12: host a: cpu: 'x' is not allowed; allowed: a whole number"


def test_merge_keys_and_anchors_keep_their_lines():
    doc = yamlfile.parse("base: &b {ssh: lab@a, cpu: 1}\nother:\n  <<: *b\n  cpu: 2\n", "f.yaml")
    assert doc["other"] == {"ssh": "lab@a", "cpu": 2}
    assert yamlfile.line_of(doc["other"], "cpu") == 4 and yamlfile.line_of(doc["other"], "ssh") == 1
    assert yamlfile.parse("", "f.yaml") is None
