"""routerlab.analysis.scenarios: presets, files, overrides, and clear errors."""

import pytest

from routerlab.engines import rules as engine_rules
from routerlab.analysis import scenarios
from routerlab.errors import DataFormatError, ParameterError


def test_presets_match_the_published_tables():
    p = scenarios.presets()
    for name in ("single-flow", "multi-flow", "single-flow-fw50", "gre-multiflow-fw50",
                 "routes900k-multiflow-fw50", "ddos-drop50", "single-flow-fw5", "single-flow-fw0"):
        assert name in p
    assert p["ddos-drop50"].drop_share == 0.5 and p["ddos-drop50"].routes == 900_000
    assert p["gre-multiflow-fw50"].features == {"firewall", "gre"}


def test_overrides_and_their_validation():
    assert scenarios.load("single-flow", rules=5).rules == 5
    with pytest.raises(ParameterError, match="rules"):
        scenarios.load("single-flow", rules=-1)
    with pytest.raises(ParameterError, match="frame_size"):
        scenarios.load("single-flow", frame_size=12)
    with pytest.raises(ParameterError, match="unknown scenario 'nope'"):
        scenarios.load("nope")


def test_scenario_file_errors_name_the_file_and_key(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("flows: multi\nrules: 7\n")
    assert scenarios.load(str(f)).rules == 7
    f.write_text("flows: multi\nrulez: 7\n")
    with pytest.raises(DataFormatError, match="mine.yaml.*unknown key.*rulez"):
        scenarios.load(str(f))
    f.write_text("flows: [unclosed\n")
    with pytest.raises(DataFormatError, match="not valid YAML"):
        scenarios.load(str(f))


def test_firewall_rules_traverse_all_and_drop_half():
    rules, policy = engine_rules.firewall(scenarios.load("single-flow-fw50"))
    assert len(rules) == 50 and policy == "accept"
    rules, policy = engine_rules.firewall(scenarios.load("ddos-drop50"))
    assert len(rules) == 50 and policy == "drop" and rules[-1].action == "accept" and rules[-1].dport_negate
    text = engine_rules.nft_ruleset(scenarios.load("ddos-drop50"))
    assert "policy drop" in text and "udp dport != 9 accept" in text and text.count(" drop\n") == 49


def test_overrides_are_part_of_the_name():
    assert scenarios.load("single-flow").name == "single-flow"
    assert scenarios.load("single-flow", rules=0).name == "single-flow"  # no change, no new name
    assert scenarios.load("single-flow", rules=5, frame_size=128).name == "single-flow_frame_size128_rules5"
