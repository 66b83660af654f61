"""Background knowledge: loading ontologies, prefixes, rdf/3 and isa/2 in rules,
literal values, isolation between engines, sandbox mode and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Graph, Namespace
from rdflib.namespace import RDF, RDFS

from etalis_py import Detection, Engine, RuleError, cli
from etalis_py.bridge._prolog import bridge
from etalis_py.rdf.knowledge import KnowledgeStats, OntologyError, OntologyNotFound

ROOT = Path(__file__).parents[1]
WEATHER = ROOT / "ontologies" / "weather.ttl"
OBSERVATIONS = ROOT / "examples" / "enhanced_fire" / "observations.ttl"
WT = "http://example.org/etalis-py/weather#"
OBS = "http://example.org/etalis-py/observations#"
EX = Namespace("http://example.org/test#")

FIRE = f"""
:- prefix(wt, '{WT}').
enhanced_fire(Area) <-
    (active_fire(Area) and weather_observation(Area, Obs)) within hours(3)
    where isa(Obs, wt:'WindObservation').
"""


def answers(engine: Engine, goal: str, template: str) -> list[str]:
    """The solutions of ``goal`` in the engine's module, each as the Prolog
    text (``~q``) of ``template``."""
    header, _ = bridge().request(
        f"solve({engine._name})", f'{goal}, format(string(Answer__), "~q", [{template}])'
    )
    return [s["Answer__"] for s in header["solutions"]]


def holds(engine: Engine, goal: str) -> bool:
    header, _ = bridge().request(f"solve({engine._name})", goal)
    return bool(header["solutions"])


# -- rules that ask the background knowledge -----------------------------------------


def test_isa_in_where_detects_a_diablo_observation_as_wind_but_not_a_temperature_one() -> None:
    with Engine.from_string(FIRE) as engine:
        engine.load_ontology([WEATHER, OBSERVATIONS])
        result = engine.emit_many([
            ("active_fire", ["napa"], 0),
            ("weather_observation", ["napa", OBS + "observ_3"], 1800),
            ("weather_observation", ["napa", OBS + "observ_1"], 3600),
        ])
        assert result.detections == [Detection("enhanced_fire", ("napa",), 0, 3600)]


def test_rdf_joins_event_variables_with_literal_values() -> None:
    rules = f"""
    :- prefix(wt, '{WT}').
    strong_wind(Obs, Speed) <- observed(Obs) where isa(Obs, wt:'WindObservation'), rdf(Obs, wt:speed, Speed), Speed > 50.
    """
    with Engine.from_string(rules) as engine:
        engine.load_ontology([WEATHER, OBSERVATIONS])
        result = engine.emit_many([("observed", [OBS + f"observ_{i}"], i) for i in (1, 2, 3)])
        assert result.detections == [Detection("strong_wind", (OBS + "observ_1", 60), 1, 1)]


def test_static_rules_use_background_knowledge_too() -> None:
    rules = f"""
    :- prefix(wt, '{WT}').
    :- prefix(obs, '{OBS}').
    warm_wind(Obs) <- observed(Obs) where windy_and_warm(Obs).
    windy_and_warm(Obs) :- isa(Obs, wt:'WindObservation'), rdf(Obs, wt:temperature, T), T >= 90.
    known(obs:observ_1).
    """
    with Engine.from_string(rules) as engine:
        engine.load_ontology([WEATHER, OBSERVATIONS])
        result = engine.emit_many([("observed", [OBS + "observ_1"], 1), ("observed", [OBS + "observ_2"], 2)])
        assert result.detections == [Detection("warm_wind", (OBS + "observ_2",), 2, 2)]
        assert holds(engine, f"known('{OBS}observ_1')")


def test_prefixed_names_in_event_patterns_match_full_iris() -> None:
    rules = f":- prefix(obs, '{OBS}').\nfirst_seen <- observed(obs:observ_1)."
    with Engine.from_string(rules) as engine:
        assert engine.emit("observed", OBS + "observ_2", at=1) == []
        assert engine.emit("observed", OBS + "observ_1", at=2) == [Detection("first_seen", (), 2, 2)]


def test_standard_prefixes_need_no_declaration() -> None:
    rules = "typed(X, C) <- observed(X) where rdf(X, rdf:type, C), C \\== rdfs:'Resource', \\+ rdf(C, rdfs:subClassOf, _)."
    with Engine.from_string(rules) as engine:
        g = Graph()
        g.add((EX.a, RDF.type, EX.Thing))
        engine.load_ontology(g)
        assert engine.emit("observed", str(EX.a), at=1) == [Detection("typed", (str(EX.a), str(EX.Thing)), 1, 1)]


# -- what the closure answers -------------------------------------------------------------


def test_isa_answers_every_class_of_an_individual_once_in_every_mode() -> None:
    with Engine.from_string("") as engine:
        engine.load_ontology([WEATHER, OBSERVATIONS])
        classes = sorted(answers(engine, f"isa('{OBS}observ_1', C)", "C"))
        assert classes == sorted(
            f"'{c}'" for c in (WT + "Diablo", WT + "WindObservation", WT + "WeatherObservation",
                               "http://www.w3.org/ns/sosa/Observation", str(RDFS.Resource))
        )
        wind = sorted(answers(engine, f"isa(X, '{WT}WindObservation')", "X"))
        assert wind == [f"'{OBS}observ_1'", f"'{OBS}observ_2'"]
        assert answers(engine, f"isa('{OBS}observ_1', '{WT}WeatherObservation')", "yes") == ["yes"]
        assert answers(engine, f"isa('{OBS}observ_3', '{WT}WindObservation')", "yes") == []
        assert sorted(answers(engine, f"rdf(X, '{RDF.type}', '{WT}WindObservation')", "X")) == wind


def test_literals_become_numbers_strings_and_typed_terms() -> None:
    turtle = """
    @prefix ex: <http://example.org/test#> .
    @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
    ex:s ex:int "60"^^xsd:int ;
         ex:integer 7 ;
         ex:negative -3 ;
         ex:decimal 1.5 ;
         ex:double "2.5E0"^^xsd:double ;
         ex:boolean true ;
         ex:string "California"^^xsd:string ;
         ex:plain "plain \\"quoted\\"\\nline" ;
         ex:lang "Napa"@en ;
         ex:time "2010-12-26T20:51:00Z"^^xsd:dateTime ;
         ex:date "2017-04-17"^^xsd:date ;
         ex:bad "abc"^^xsd:int ;
         ex:iri ex:o ;
         ex:blank [] .
    """
    g = Graph().parse(data=turtle, format="turtle")
    with Engine.from_string("") as engine:
        engine.load_ontology(g, entailment="none")

        def value(p: str) -> list[str]:
            return answers(engine, f"rdf('{EX}s', '{EX}{p}', O)", "O")

        assert value("int") == ["60"]
        assert value("integer") == ["7"]
        assert value("negative") == ["-3"]
        assert value("decimal") == ["1.5"]
        assert value("double") == ["2.5"]
        assert value("boolean") == ["true"]
        assert value("string") == ['"California"']
        assert value("plain") == ['"plain \\"quoted\\"\\nline"']
        assert value("lang") == ['"Napa"']
        assert value("time") == ["1293396660.0"]
        assert value("date") == ["literal(type('http://www.w3.org/2001/XMLSchema#date',\"2017-04-17\"))"]
        assert value("bad") == ["literal(type('http://www.w3.org/2001/XMLSchema#int',\"abc\"))"]
        assert value("iri") == [f"'{EX}o'"]
        [blank] = value("blank")
        assert blank.startswith("'_:")
        assert answers(engine, f"rdf('{EX}s', '{EX}string', O), string(O)", "yes") == ["yes"]
        assert answers(engine, f"rdf('{EX}s', '{EX}int', O), integer(O)", "yes") == ["yes"]


def test_entailment_none_rdfs_and_owlrl_differ_as_they_should() -> None:
    turtle = """
    @prefix ex: <http://example.org/test#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    @prefix owl: <http://www.w3.org/2002/07/owl#> .
    ex:C rdfs:subClassOf ex:D .
    ex:a a ex:C .
    ex:p a owl:TransitiveProperty .
    ex:x ex:p ex:y . ex:y ex:p ex:z .
    """
    g = Graph().parse(data=turtle, format="turtle")
    seen = {}
    for entailment in ("none", "rdfs", "owlrl"):
        with Engine.from_string("") as engine:
            stats = engine.load_ontology(g, entailment=entailment)
            assert stats.entailment == entailment and stats.input_triples == 5
            seen[entailment] = (
                holds(engine, f"isa('{EX}a', '{EX}C')"),
                holds(engine, f"isa('{EX}a', '{EX}D')"),
                holds(engine, f"rdf('{EX}x', '{EX}p', '{EX}z')"),
            )
    assert seen == {"none": (True, False, False), "rdfs": (True, True, False), "owlrl": (True, True, True)}
    assert len(g) == 5  # the caller's graph is left as it was


def test_each_load_closes_everything_loaded_so_far() -> None:
    with Engine.from_string(FIRE) as engine:
        first = engine.load_ontology(OBSERVATIONS)
        assert not holds(engine, f"isa('{OBS}observ_1', '{WT}WindObservation')")
        second = engine.load_ontology(WEATHER)
        assert holds(engine, f"isa('{OBS}observ_1', '{WT}WindObservation')")
        assert (first.input_triples, second.input_triples) == (11, 69)
        assert second.sources == (str(OBSERVATIONS), str(WEATHER))
        assert engine.emit_many([("active_fire", ["napa"], 0), ("weather_observation", ["napa", OBS + "observ_2"], 60)]
                                ).detections == [Detection("enhanced_fire", ("napa",), 0, 60)]


def test_turtle_rdfxml_and_ntriples_give_the_same_knowledge(tmp_path: Path) -> None:
    g = Graph().parse(WEATHER).parse(OBSERVATIONS)
    found = []
    for fmt, ext in (("turtle", "ttl"), ("xml", "rdf"), ("nt", "nt")):
        path = tmp_path / f"knowledge.{ext}"
        g.serialize(path, format=fmt, encoding="utf-8")
        with Engine.from_string("") as engine:
            stats = engine.load_ontology(path)
            found.append((stats.input_triples, stats.triples, sorted(answers(engine, "rdf(S, P, O)", "t(S,P,O)"))))
    assert found[0][0] == 69 and found[0][1] == len(found[0][2]) == 178
    assert found[0] == found[1] == found[2]


def test_stats_count_the_closure_and_its_facts() -> None:
    with Engine.from_string("") as engine:
        stats = engine.load_ontology([WEATHER, OBSERVATIONS])
    assert isinstance(stats, KnowledgeStats)
    assert (stats.entailment, stats.input_triples, stats.triples) == ("rdfs", 69, 178)
    assert 0 < stats.facts < stats.triples and stats.seconds > 0


# -- the rule file's directives -------------------------------------------------------------


def test_ontology_directive_is_relative_to_the_rule_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "obs.ttl").write_text(OBSERVATIONS.read_text())
    rules = tmp_path / "fire.etl"
    rules.write_text(f":- ontology('{WEATHER}').\n:- ontology('knowledge/obs.ttl').\n{FIRE}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with Engine.from_file(rules) as engine:
        assert engine.emit_many([("weather_observation", ["napa", OBS + "observ_1"], 0), ("active_fire", ["napa"], 5)]
                                ).detections == [Detection("enhanced_fire", ("napa",), 0, 5)]


def test_ontology_directive_takes_an_entailment(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    (tmp_path / "obs.ttl").write_text(OBSERVATIONS.read_text())   # beside the rules, as the sandbox wants
    rules.write_text(f":- ontology('{WEATHER}', [entailment(none)]).\n:- ontology('obs.ttl', [entailment(none)]).\n{FIRE}")
    with Engine.from_file(rules) as engine:
        assert not holds(engine, f"isa('{OBS}observ_1', '{WT}WindObservation')")
        assert holds(engine, f"isa('{OBS}observ_1', '{WT}Diablo')")


def test_directives_with_different_entailments_are_an_error(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    (tmp_path / "obs.ttl").write_text(OBSERVATIONS.read_text())
    rules.write_text(f":- ontology('{WEATHER}').\n:- ontology('obs.ttl', [entailment(owlrl)]).\n")
    with pytest.raises(RuleError) as info:
        Engine.from_file(rules)
    assert (info.value.file, info.value.line) == (str(rules), 2)
    assert "owlrl entailment" in info.value.message


def test_loads_with_another_entailment_are_refused() -> None:
    with Engine.from_string("") as engine:
        engine.load_ontology(WEATHER)
        with pytest.raises(ValueError, match="closed under rdfs"):
            engine.load_ontology(OBSERVATIONS, entailment="owlrl")
        with pytest.raises(ValueError, match="unknown entailment 'owl'"):
            engine.load_ontology(OBSERVATIONS, entailment="owl")


# -- bad input ---------------------------------------------------------------------------------


def test_missing_ontology_file_names_the_file(tmp_path: Path) -> None:
    with Engine.from_string("") as engine:
        with pytest.raises(OntologyNotFound) as info:
            engine.load_ontology(tmp_path / "nope.ttl")
    assert info.value.file == str(tmp_path / "nope.ttl")
    assert str(info.value) == f"{tmp_path / 'nope.ttl'}: error: ontology file {tmp_path / 'nope.ttl'} does not exist"
    assert isinstance(info.value, FileNotFoundError)


@pytest.mark.parametrize(
    "name,text,line,message",
    [
        ("bad.ttl", "@prefix ex: <http://e#> .\nex:a ex:b ex:c .\nex:a ex:b .\n", 3, "bad turtle syntax: objectList expected"),
        ("bad.rdf", '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
                    '<rdf:Description rdf:about="http://e#a">\n</rdf:RDF>\n', 4, "bad RDF/XML: mismatched tag"),
        ("bad.nt", "<http://e#a> <http://e#b> <http://e#c> .\n<http://e#a> <http://e#b> \"x\n", 2, "cannot parse nt"),
    ],
)
def test_unparsable_ontology_names_file_and_line(tmp_path: Path, name: str, text: str, line: int, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with Engine.from_string("") as engine:
        with pytest.raises(OntologyError) as info:
            engine.load_ontology(path)
        assert (info.value.file, info.value.line) == (str(path), line)
        assert info.value.message.startswith(message)
        assert str(info.value).startswith(f"{path}:{line}: error: {message}")
        engine.load_ontology(WEATHER)  # a failed load leaves the engine as it was
        assert holds(engine, f"rdf('{WT}Diablo', '{RDFS.subClassOf}', '{WT}WindObservation')")


def test_missing_ontology_of_a_directive_is_a_positioned_rule_error(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c <- a.\n:- ontology('missing.ttl').\n")
    with pytest.raises(RuleError) as info:
        Engine.from_file(rules)
    e = info.value
    assert (e.file, e.line, e.column) == (str(rules), 2, 1)
    assert e.message == f"ontology file {tmp_path / 'missing.ttl'} does not exist"
    assert "relative to the rule file" in e.hint


def test_unparsable_ontology_of_a_directive_names_it_and_the_rule_file(tmp_path: Path) -> None:
    (tmp_path / "bad.ttl").write_text("@prefix ex: <http://e#> .\nex:a ex:b .\n")
    rules = tmp_path / "r.etl"
    rules.write_text("c <- a.\n\n:- ontology('bad.ttl').\n")
    with pytest.raises(OntologyError) as info:
        Engine.from_file(rules)
    assert (info.value.file, info.value.line) == (str(tmp_path / "bad.ttl"), 2)
    assert info.value.message == f"bad turtle syntax: objectList expected (an ontology of {rules}, line 3)"


def test_unknown_prefix_names_the_rules_file_and_line(tmp_path: Path) -> None:
    rules = tmp_path / "fire.etl"
    rules.write_text("% fire\nc <- a.\n\nenhanced_fire(A) <- fire(A, O) where isa(O, wt:'WindObservation').\n")
    with pytest.raises(RuleError) as info:
        Engine.from_file(rules)
    e = info.value
    assert (e.file, e.line, e.column) == (str(rules), 4, 1)
    assert e.message == "unknown prefix wt in wt:'WindObservation'"
    assert e.hint.startswith("declare it before its first use, e.g. :- prefix(wt,")


@pytest.mark.parametrize(
    "text,line,message",
    [
        (f"c(X) <- a(X) where isa(X, wt:'W').\n:- prefix(wt, '{WT}').", 1, "unknown prefix wt in wt:'W'"),
        (f":- prefix(wt, '{WT}').\nc(X) <- a(X) where isa(X, wt:Wind).", 2, "the local name after wt: is a variable, not a name"),
        ("known(ex:a).", 1, "unknown prefix ex in ex:a"),
        ("c <- a(zz:b).", 1, "unknown prefix zz in zz:b"),
        (":- prefix(1, 'http://e#').", 1, "a prefix must be an atom"),
        (":- prefix(ex, 42).", 1, "the namespace of prefix ex must be an IRI in quotes"),
        (":- ontology(42).", 1, "an ontology is named by its file, in quotes"),
        (":- ontology('x.ttl', [entailment(owl)]).", 1, "bad ontology options [entailment(owl)]"),
        ("rdf(a, b, c).", 1, "rdf/3 answers from the background knowledge and cannot be redefined"),
        ("c <- a.\nisa(X, C) :- member(X-C, []).", 2, "isa/2 answers from the background knowledge and cannot be redefined"),
    ],
)
def test_bad_prefixes_and_directives_are_positioned_errors(text: str, line: int, message: str) -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(text, source="k.etl")
    assert (info.value.file, info.value.line, info.value.message) == ("k.etl", line, message)


def test_prefix_declared_later_is_named_in_the_hint() -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(f"c(X) <- a(X) where isa(X, wt:'W').\n\n:- prefix(wt, '{WT}').", source="k.etl")
    assert info.value.hint == "wt is declared on line 3: declare a prefix before its first use"


def test_module_qualified_goals_and_host_port_terms_are_not_prefixed_names() -> None:
    rules = "c(X) <- a(X) where lists:member(X, [1, 2]), Y = localhost:80, Y = _:80."
    with Engine.from_string(rules) as engine:
        assert engine.emit("a", 2, at=1) == [Detection("c", (2,), 1, 1)]


# -- engines and sandbox -----------------------------------------------------------------------


def test_two_engines_never_see_each_others_knowledge() -> None:
    rules = "kind(X, C) <- observed(X) where isa(X, C), C \\== 'http://www.w3.org/2000/01/rdf-schema#Resource'."
    one = Engine.from_string(rules)
    two = Engine.from_string(rules)
    try:
        g1, g2 = Graph(), Graph()
        g1.add((EX.a, RDF.type, EX.One))
        g2.add((EX.a, RDF.type, EX.Two))
        g2.add((EX.b, RDF.type, EX.Two))
        one.load_ontology(g1)
        two.load_ontology(g2)
        assert one.emit("observed", str(EX.a), at=1) == [Detection("kind", (str(EX.a), str(EX.One)), 1, 1)]
        assert two.emit("observed", str(EX.a), at=1) == [Detection("kind", (str(EX.a), str(EX.Two)), 1, 1)]
        assert one.emit("observed", str(EX.b), at=2) == []
        assert answers(one, "rdf(S, P, O)", "S") != answers(two, "rdf(S, P, O)", "S")
        one.close()
        assert two.emit("observed", str(EX.b), at=3) == [Detection("kind", (str(EX.b), str(EX.Two)), 3, 3)]
    finally:
        one.close()
        two.close()


def test_rdf_and_isa_are_allowed_in_sandbox_mode() -> None:
    rules = f"""
    :- prefix(wt, '{WT}').
    windy(Obs, S) <- observed(Obs) where isa(Obs, wt:'WindObservation'), speed(Obs, S).
    speed(Obs, S) :- rdf(Obs, wt:speed, S).
    """
    with Engine.from_string(rules, sandbox=True) as engine:
        engine.load_ontology([WEATHER, OBSERVATIONS])
        result = engine.emit_many([("observed", [OBS + "observ_3"], 1), ("observed", [OBS + "observ_2"], 2)])
        assert result.detections == [Detection("windy", (OBS + "observ_2", 40), 2, 2)]


def test_cli_run_takes_ontologies(tmp_path: Path) -> None:
    import subprocess
    import sys

    rules = tmp_path / "fire.etl"
    rules.write_text(FIRE)
    events = ROOT / "examples" / "enhanced_fire" / "events.jsonl"
    cmd = [sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events)]
    r = subprocess.run(cmd + ["--ontology", str(WEATHER), "--ontology", str(OBSERVATIONS)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        '{"event": "enhanced_fire", "args": ["napa"], "start": 0, "end": 3600}',
        '{"event": "enhanced_fire", "args": ["sonoma"], "start": 5400, "end": 7200}',
    ]
    r = subprocess.run(cmd + ["--ontology", str(tmp_path / "missing.ttl")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip() == f"{tmp_path / 'missing.ttl'}: error: ontology file {tmp_path / 'missing.ttl'} does not exist"


def test_rules_added_while_running_ask_the_knowledge_with_their_own_prefixes() -> None:
    with Engine.from_string("c <- a.") as engine:
        engine.load_ontology(WEATHER)
        engine.add_rules(f":- prefix(wt, '{WT}').\nwindy(C) <- b(C) where rdf(C, rdfs:subClassOf, wt:'WindObservation').")
        assert engine.emit("b", WT + "Diablo", at=1) == [Detection("windy", (WT + "Diablo",), 1, 1)]
        assert engine.emit("b", WT + "Blizzard", at=2) == []


STATIONS_TTL = """@prefix ex: <http://example.org/stations#> .
ex:CoastalStation a <http://www.w3.org/2002/07/owl#Class> .
ex:san a ex:CoastalStation ; ex:icao "KSAN" .
ex:lax a ex:CoastalStation ; ex:icao "KLAX" .
ex:den ex:icao "KDEN" .
"""
STATIONS_ETL = """:- prefix(ex, 'http://example.org/stations#').
:- ontology('stations.ttl').
coastal(S, T) <- reading(S, T) where (rdf(St, ex:icao, S), isa(St, ex:'{cls}')).
"""


def stations(tmp_path: Path, cls: str) -> tuple[Path, Path]:
    (tmp_path / "stations.ttl").write_text(STATIONS_TTL, encoding="utf-8")
    rules = tmp_path / "coast.etl"
    rules.write_text(STATIONS_ETL.format(cls=cls), encoding="utf-8")
    data = tmp_path / "readings.csv"
    data.write_text("station,temp,time\nKSAN,20,1\nKDEN,5,2\nKLAX,22,3\nXXXX,1,4\n", encoding="utf-8")
    return rules, data


def test_a_text_from_a_csv_column_finds_the_string_literal_of_that_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the CSV gives the atom 'KSAN', the Turtle file the string "KSAN": rdf/3 matches them
    rules, data = stations(tmp_path, "CoastalStation")
    assert cli.main(["check", str(rules)]) == cli.EXIT_OK
    assert capsys.readouterr().out == f"{rules}: ok: 1 rules, 1 binary goals, policy unrestricted, reports coastal/2\n"
    assert cli.main(["run", str(rules), "--events", str(data), "--event", "reading", "--args", "station,temp",
                     "--time", "time", "--quiet"]) == cli.EXIT_OK
    assert capsys.readouterr().out == ('{"event": "coastal", "args": ["KSAN", 20], "start": 1, "end": 1}\n'
                                       '{"event": "coastal", "args": ["KLAX", 22], "start": 3, "end": 3}\n')
    with Engine.from_file(rules) as engine:         # an object that rdf/3 binds is the literal's string
        header, _ = bridge().request(f"solve({engine._name})",
                                     "rdf(S, 'http://example.org/stations#icao', 'KSAN'), "
                                     "rdf(S, 'http://example.org/stations#icao', O), string(O)")
        assert header["solutions"] == [{"S": "http://example.org/stations#san", "O": "KSAN"}]


def test_a_class_no_loaded_ontology_mentions_is_a_warning_with_the_near_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, data = stations(tmp_path, "CoastStation")
    warning = (f"{rules}:3:1: warning: the class ex:'CoastStation' is in no loaded ontology ({tmp_path / 'stations.ttl'}): "
               "the knowledge has no triple with it, so the goal asking it never holds [unknown-iri]\n"
               "  hint: did you mean ex:'CoastalStation'?\n")
    assert cli.main(["check", str(rules)]) == cli.EXIT_OK
    assert capsys.readouterr().out == (
        warning + f"{rules}: 1 warning: 1 rules, 1 binary goals, policy unrestricted, reports coastal/2\n")
    assert cli.main(["run", str(rules), "--events", str(data), "--event", "reading", "--args", "station,temp",
                     "--time", "time"]) == cli.EXIT_OK
    out, err = capsys.readouterr()
    assert (out, err.startswith(warning)) == ("", True)
