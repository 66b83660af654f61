:- module(test_feed, []).
:- use_module(library(plunit)).
:- use_module('../../prolog/etalis/runtime/runtime').
:- use_module('../../prolog/etalis/runtime/feed').
:- use_module('../../prolog/etalis/runtime/feed_state', [feed_warning/2]).
:- use_module('../../prolog/etalis/runtime/batches').
:- use_module('../../prolog/etalis/runtime/protocol', [feed_header/2]).

%   An engine without rules that reports every event it accepts, so that
%   the detections are the accepted events.

echo_engine(M) :-
    engine_create(M),
    engine_start(M, [], none, inf),
    assertz(M:('$on'(E, T1, T2, det(E, T1, T2)))).

feed(Text, Accepted, Rejected, Events) :-
    feed(Text, object, Accepted, Rejected, Events).

feed(Text, Format, Accepted, Rejected, Events) :-
    echo_feed(feed(Text, Format), Accepted, Rejected, Events).

feed_list(Text, Count, Accepted, Rejected, Events) :-
    echo_feed(feed_list(Text, Count), Accepted, Rejected, Events).

%   echo_feed(+How, -Accepted, -Rejected, -Events): feed an echo engine
%   as How says, Events the lines of its detections.

echo_feed(How, Accepted, Rejected, Events) :-
    echo_engine(M),
    Summary = summary(Accepted, _, Rejected, _, none),
    (   How = feed(Text, Format)
    ->  engine_feed(M, lines(Text), [format(Format)], Summary, Detections)
    ;   How = feed_list(Text, Count),
        request_batches(list(Count), Text, false, [Batch]),
        engine_feed(M, Batch, [], Summary, Detections)
    ),
    split_string(Detections, "\n", "", Lines0),
    exclude(==(""), Lines0, Events),
    engine_destroy(M).

%   report_engine(-Engine, +Limit, +Names): an engine limited to Limit
%   inferences per event that reports each event of Names (Name/Arity)
%   it is fed.  Unlike an echo engine, no clause of it takes a timer's
%   event, so that a feed of terms takes the quick way (see
%   etalis_feed:quick_run/14).

report_engine(M, Limit, Names) :-
    engine_create(M),
    engine_start(M, [], none, Limit),
    forall(member(Name/Arity, Names),
           (   functor(E, Name, Arity),
               assertz(M:'$on'(E, T1, T2, det(E, T1, T2)))
           )).

%   An echo engine whose event `loop` never ends, limited to 1,000
%   inferences per event.

looping_feed(Text, Accepted, Rejected, Stopped, Events) :-
    engine_create(M),
    engine_start(M, [], none, 1000),
    assertz(M:(spin :- spin)),
    assertz(M:('$on'(loop, _, _, _) :- spin)),
    assertz(M:('$on'(E, T1, T2, det(E, T1, T2)) :- E \== loop)),
    engine_feed(M, lines(Text), [], summary(Accepted, _, Rejected, _, Stopped), Detections),
    split_string(Detections, "\n", "", Lines0),
    exclude(==(""), Lines0, Events),
    engine_destroy(M).

%   An echo engine whose event `slow` runs for minutes within few
%   inferences (each msort/2 of a long list is one), limited to
%   1,000,000 inferences per event: a second.

slow_feed(Text, Accepted, Stopped) :-
    engine_create(M),
    engine_start(M, [], none, 1_000_000),
    assertz(M:('$on'(slow, _, _, _) :- numlist(1, 100000, L), forall(between(1, 20000, _), msort(L, _)))),
    assertz(M:('$on'(E, T1, T2, det(E, T1, T2)) :- E \== slow)),
    engine_feed(M, lines(Text), [], summary(Accepted, _, _, _, Stopped), _),
    engine_destroy(M).

%   burst_feed(+Terms, -Summary, -Detections, -Next): feed the list
%   Terms (as packed columns give it, from line 10) to an engine
%   whose event `burst` runs out of memory, then an event at time 2.5:
%   Next is that second feed's summary.

burst_feed(Terms, Summary, Detections, Next) :-
    report_engine(M, inf, [a/1, c/0]),
    asserta(M:('$on'(burst, _, _, _) :- throw(error(resource_error(memory), _)))),
    engine_feed(M, terms(Terms, checked), [first(10), format(row)], Summary, Detections),
    engine_feed(M, terms([event(c, 2.5)], checked), [first(20), format(row)], Next, _),
    engine_destroy(M).

%   limit_ways(:Goal): Goal holds with the inference limit kept the
%   direct way and the portable way (see etalis_limits:limit_budget/2).

:- meta_predicate limit_ways(0), limit_ways_off(0).

limit_ways_off(Goal) :-
    current_prolog_flag(etalis_direct_limits, Old),
    setup_call_cleanup(set_prolog_flag(etalis_direct_limits, false),
                       once(Goal),
                       set_prolog_flag(etalis_direct_limits, Old)).

limit_ways(Goal) :-
    current_prolog_flag(etalis_direct_limits, Old),
    forall(member(Way, [true, false]),
           setup_call_cleanup(set_prolog_flag(etalis_direct_limits, Way),
                              once(Goal),
                              set_prolog_flag(etalis_direct_limits, Old))).

%   quick_loop_feed(+Terms, -Summary, -Detections, -Next): feed the list
%   Terms (from line 10) to an engine whose event `loop` never ends,
%   limited to 1,000 inferences per event, then an event at time 9: Next
%   is that second feed's summary.

quick_loop_feed(Terms, Summary, Detections, Next) :-
    report_engine(M, 1000, [a/1, b/1, c/0]),
    assertz(M:(spin :- spin)),
    asserta(M:('$on'(loop, _, _, _) :- spin)),
    engine_feed(M, terms(Terms, checked), [first(10), format(row)], Summary, Detections),
    engine_feed(M, terms([event(c, 9)], checked), [first(20), format(row)], Next, _),
    engine_destroy(M).

%   fits(+Limit, +Steps): an event that takes Steps steps of a rule
%   is processed within Limit inferences.

fits(Limit, Steps) :-
    engine_create(M),
    engine_start(M, [], none, Limit),
    assertz(M:(steps(0) :- !)),
    assertz(M:(steps(N) :- N1 is N - 1, steps(N1))),
    assertz(M:('$on'(go(N), T1, T2, det(go(N), T1, T2)) :- steps(N))),
    engine_feed(M, terms([event(go(Steps), 1)], checked), [], summary(_, _, _, _, Stopped), _),
    engine_destroy(M),
    Stopped == none.

least_limit(Steps, Limit) :-
    between(1, 1000, Limit),
    fits(Limit, Steps),
    !.

stopped_header(Stopped, Pairs) :-
    feed_header(summary(0, 0, [], [], Stopped), Header),
    dict_pairs(Header.stopped, _, Pairs).

:- begin_tests(feed).

test(an_event_over_the_inference_limit_stops_the_feed_before_it, [A, R, S, Es] ==
     [1, [], limit(2, loop, 1000, none), ["{\"event\": \"a\", \"args\": [1], \"start\": 1, \"end\": 1}"]]) :-
    looping_feed("event(a(1), 1).\nevent(loop, 2).\nevent(b(1), 3).\n", A, R, S, Es).

test(unclosed_quote_is_one_rejected_line, [A, R, N] == [3, [rejected(2, "syntax error: a quote (') is never closed")], 3]) :-
    feed("event(a(1), 1).\nevent(a('x), 2).\nevent(b(1), 3).\nevent(b(2), 4).\n", A, R, Es),
    length(Es, N).

test(unclosed_quote_after_a_term_on_its_line, [A, R] == [3, [rejected(1, "syntax error: a quote (') is never closed")]]) :-
    feed("event(a(1), 1). event(b('x), 2).\nevent(b(1), 3).\nevent(b(2), 4).\n", A, R, _).

test(quote_closed_on_a_later_line_rejects_its_first_line_only, [A, R] ==
     [2, [rejected(2, "syntax error: a quote (') is never closed"),
          rejected(3, "syntax error: a quote (') is never closed")]]) :-
    feed("event(a(1), 1).\nevent(a('x), 2).\nevent(b('), 3).\nevent(b(2), 4).\n", A, R, _).

test(variables_are_rejected, [A, R] == [1, [rejected(1, "an event cannot be a variable"),
                                            rejected(2, "an event cannot be a variable")]]) :-
    feed("_.\nX.\nevent(a(1), 3).\n", A, R, _).

test(end_of_file_term_is_rejected_and_reading_goes_on, [A, R] ==
     [2, [rejected(2, "end_of_file marks the end of a Prolog file: it is not an event here")]]) :-
    feed("event(a(1), 1).\nend_of_file.\nevent(b(1), 3).\n", A, R, _).

test(end_of_file_term_on_the_last_line_without_newline, [A, R] ==
     [1, [rejected(2, "end_of_file marks the end of a Prolog file: it is not an event here")]]) :-
    feed("event(a(1), 1).\nend_of_file.", A, R, _).

test(clauses_are_rejected, [A, R] ==
     [1, [rejected(1, "a:-b is a Prolog clause or directive, not an event"),
          rejected(2, "?-a is a Prolog clause or directive, not an event"),
          rejected(3, "a:-b is a Prolog clause or directive, not an event")]]) :-
    feed("a :- b.\n?- a.\nevent((a :- b), 2).\nevent(c, 4).\n", A, R, _).

test(blank_and_comment_lines_between_terms_keep_line_numbers, [A, R] ==
     [2, [rejected(5, "an event cannot be a variable")]]) :-
    feed("event(a(1), 1).\n\n% note\n\n_.\nevent(b(1), 6).\n", A, R, _).

test(a_batch_list_with_a_head_binds_its_variables_to_the_atoms, [A, R, Es] ==
     [2, [], ["{\"event\": \"g\", \"args\": [\"http://ex.org/a\", \"http://ex.org/b\"], \"start\": 1, \"end\": 1}",
              "{\"event\": \"g\", \"args\": [\"http://ex.org/b\", 7], \"start\": 3, \"end\": 3}"]]) :-
    feed_list("[_0,_1]=['http://ex.org/a','http://ex.org/b'],\n[event(g(_0,_1), 1),\n[],\nevent(g(_1,7), 3)]",
              3, A, R, Es).

test(a_batch_list_with_a_head_that_does_not_read_is_fed_line_by_line_without_it, [A, R] ==
     [1, [rejected(1, "event g(_) has unbound variables"),
          rejected(3, "syntax error: an operand expected, found an unquoted comma or bar at column 9 (an event line is a(1). or event(a(1), 5). or event(a(1), [5, 7]). with times in seconds; dates can be given in .jsonl or .csv files)")]]) :-
    feed_list("[_0]=['http://ex.org/a'],\n[event(g(_0), 1),\nevent(g(2), 2),\nevent(g(, 3)]", 3, A, R, _).

test(detections_as_objects_plain_and_general, Es ==
     ["{\"event\": \"a\", \"args\": [1, -2.5, \"b c\"], \"start\": 1, \"end\": 1}",
      "{\"event\": \"x\\\"y\", \"args\": [[1, \"b\"], \"é\", \"f(X)\"], \"start\": 2, \"end\": 3.5}"]) :-
    feed("event(a(1, -2.5, 'b c'), 1).\nevent('x\"y'([1, b], 'é', 'f(X)'), [2, 3.5]).\n", object, 2, [], Es).

test(detections_as_rows_plain_and_general, Es ==
     ["[\"a\", [1, -2.5, \"b c\"], 1, 1]",
      "[\"x\\\"y\", [[1, \"b\"], \"é\", \"f(X)\"], 2, 3.5]"]) :-
    feed("event(a(1, -2.5, 'b c'), 1).\nevent('x\"y'([1, b], 'é', 'f(X)'), [2, 3.5]).\n", row, 2, [], Es).

%   Engine A's event x warns, then feeds engine B an event y, which warns
%   in turn: each feed's summary has its own engine's warning only.

test(two_engines_keep_their_warnings_apart, [WA, WB] == [[warning(1, "from a")], [warning(1, "from b")]]) :-
    engine_create(A),
    engine_start(A, [], none, inf),
    engine_create(B),
    engine_start(B, [], none, inf),
    assertz(B:('$on'(y, _, _, _) :- etalis_feed_state:feed_warning(B, "from b"), fail)),
    assertz(A:('$on'(x, _, _, _) :-
                  etalis_feed_state:feed_warning(A, "from a"),
                  etalis_feed:engine_feed(B, lines("event(y, 1).\n"), [], summary(_, _, _, WB0, _), _),
                  nb_setval(test_feed_warnings_b, WB0),
                  fail)),
    engine_feed(A, lines("event(x, 1).\n"), [], summary(_, _, _, WA, _), _),
    nb_getval(test_feed_warnings_b, WB),
    nb_delete(test_feed_warnings_b),
    engine_destroy(A),
    engine_destroy(B).

test(an_event_that_runs_longer_than_its_limit_allows_stops_at_a_time_limit, [A, S] ==
     [1, time(2, slow, 1, 1_000_000, none)]) :-
    slow_feed("event(a(1), 1).\nevent(slow, 2).\nevent(b(1), 3).\n", A, S0),
    S0 = time(Line, E, Seconds0, Limit, In),
    Seconds is integer(Seconds0),               % max(1, Limit / 10^6): 1 or 1.0
    S = time(Line, E, Seconds, Limit, In).

test(each_kind_of_limit_is_its_own_stopped_reply, [L, T, M] ==
     [[event-"a(1)", kind-limit, limit-1000, line-2, where-"loop(1)"],
      [event-"b", kind-time, limit-2000000, line-3, seconds-2, where-null],
      [event-"c(x)", kind-memory, limit-1073741824, line-4]]) :-
    stopped_header(limit(2, a(1), 1000, where(loop(1))), L),
    stopped_header(time(3, b, 2, 2_000_000, none), T),
    stopped_header(memory(4, c(x), 1_073_741_824), M).

test(a_flush_that_reaches_a_limit_raises_it_inside_error, error(etalis_limit(limit(1, loop, 1000, none)))) :-
    engine_create(M),
    engine_start(M, [], 10, 1000),
    assertz(M:(spin :- spin)),
    assertz(M:('$on'(loop, _, _, _) :- spin)),
    engine_feed(M, lines("event(loop, 1).\n"), [], summary(1, _, [], _, none), ""),
    engine_feed(M, flush(true), [], _, _).

test(an_event_out_of_memory_stops_the_quick_loop_before_it, [S, D, N] ==
     [summary(2, 0, [], [], memory(13, burst, Bytes)), "[\"a\", [1], 1, 1]\n[\"a\", [2], 2, 2]\n",
      summary(1, 0, [], [], none)]) :-
    current_prolog_flag(stack_limit, Bytes),
    burst_feed([event(a(1), 1), [], event(a(2), 2), event(burst, 3), event(a(3), 4)], S, D, N).

test(a_resource_error_of_another_resource_is_no_stop, error(resource_error(file_handles))) :-
    echo_engine(M),
    asserta(M:('$on'(files, _, _, _) :- throw(error(resource_error(file_handles), _)))),
    call_cleanup(engine_feed(M, terms([event(a(1), 1), event(files, 2)], checked), [], _, _),
                 engine_destroy(M)).

test(the_limits_of_this_prolog_are_kept_the_direct_way, [D, P] == [direct(998, Outer), portable(1000)]) :-
    etalis_limits:limit_budget(1000, D),
    D = direct(_, Outer),
    limit_ways_off(etalis_limits:limit_budget(1000, P)).

test(a_thread_keeps_the_limits_the_direct_way, B = direct(998, _)) :-
    thread_self(Me),
    thread_create(( etalis_limits:limit_budget(1000, B0),
                    thread_send_message(Me, budget(B0))
                  ), Id),
    thread_join(Id, true),
    thread_get_message(budget(B)).

test(the_quick_loop_stops_an_event_at_the_inference_limit_either_way) :-
    limit_ways(( quick_loop_feed([event(a(1), 1), [], event(loop, 2), event(b(1), 3)], S, D, N),
                 S == summary(1, 0, [], [], limit(12, loop, 1000, none)),
                 D == "[\"a\", [1], 1, 1]\n",
                 N == summary(1, 0, [], [], none),
                 numlist(1, 100_000, L),               % the limit outside is none again
                 foldl([X, Y0, Y]>>(Y is X + Y0), L, 0, Sum),
                 Sum == 5_000_050_000
               )).

test(an_event_has_the_same_inferences_either_way, Ls == [[L0, L0, L50, L50]]) :-
    findall([D0, P0, D50, P50],
            ( set_prolog_flag(etalis_direct_limits, true),
              least_limit(0, D0), least_limit(50, D50),
              set_prolog_flag(etalis_direct_limits, false),
              least_limit(0, P0), least_limit(50, P50),
              set_prolog_flag(etalis_direct_limits, true)
            ), Ls),
    Ls = [[L0, _, L50, _]],
    L50 - L0 >= 50.

test(an_event_that_runs_longer_than_its_limit_allows_stops_the_quick_loop_either_way) :-
    limit_ways(( report_engine(M, 1_000_000, [a/1, b/1]),
                 assertz(M:('$on'(slow, _, _, _) :- numlist(1, 100000, L), forall(between(1, 20000, _), msort(L, _)))),
                 engine_feed(M, terms([event(a(1), 1), event(slow, 2), event(b(1), 3)], checked), [format(row)],
                             summary(A, _, _, _, time(Line, E, _, Limit, In)), D),
                 engine_destroy(M),
                 [A, Line, E, Limit, In, D] == [1, 2, slow, 1_000_000, none, "[\"a\", [1], 1, 1]\n"]
               )).

%   Engine A's event x feeds engine B, without a limit, an event that
%   never ends: A's limit stops A's event, which B's feed does not take
%   for its own.

test(a_limit_outside_a_feed_stops_the_event_outside, S == limit(1, x, 1000, none)) :-
    report_engine(B, inf, [z/0]),
    assertz(B:(spin :- spin)),
    asserta(B:('$on'(loop, _, _, _) :- spin)),
    report_engine(A, 1000, [w/0]),
    assertz(A:('$on'(x, _, _, _) :- etalis_feed:engine_feed(B, terms([event(loop, 1)], checked), [], _, _), fail)),
    limit_ways(( engine_feed(A, terms([event(x, 1)], checked), [], summary(_, _, _, _, S0), _),
                 S0 == limit(1, x, 1000, none) )),
    engine_feed(A, terms([event(x, 2)], checked), [], summary(_, _, _, _, S), _),
    engine_destroy(A),
    engine_destroy(B).

test(an_event_raised_in_the_quick_loop_follows_its_event, [S, D] ==
     [summary(3, 1, [], [], none), "[\"w\", [], 1, 1]\n[\"x\", [], 2, 2]\n[\"y\", [], 2, 2]\n[\"z\", [], 3, 3]\n"]) :-
    report_engine(M, inf, [w/0, x/0, y/0, z/0]),
    asserta(M:('$on'(x, _, _, _) :- event(y), fail)),
    engine_feed(M, terms([event(w, 1), event(x, 2), event(z, 3)], checked), [format(row)], S, D),
    engine_destroy(M).

:- end_tests(feed).
