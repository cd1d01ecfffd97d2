"""Numbered schema migrations, recorded in ``_migrations`` (llm's ``@migration`` pattern).

Add a new ``mNNN_...`` function at the end; never edit one that has shipped. New columns go at the end of a table.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

MIGRATIONS: list[tuple[str, Callable[[duckdb.DuckDBPyConnection], None]]] = []


def migration(fn: Callable[[duckdb.DuckDBPyConnection], None]):
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_core(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY,
            flow VARCHAR NOT NULL,
            parent_run_id VARCHAR,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            status VARCHAR NOT NULL,          -- running | ok | partial | failed | crashed
            config JSON,
            versions JSON,
            summary JSON,
            error VARCHAR
        );
        CREATE TABLE errors (
            run_id VARCHAR NOT NULL,
            stage VARCHAR NOT NULL,           -- ingest | questions | detect | arbiter | generate | eval
            subject VARCHAR NOT NULL,         -- file path, 'questions.jsonl:17', question id
            error VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT now()
        );
        CREATE TABLE documents (
            path VARCHAR PRIMARY KEY,         -- absolute path of the file
            doc_id VARCHAR,                   -- sha256 of the bytes (NULL when unreadable)
            run_id VARCHAR NOT NULL,
            n_bytes BIGINT,
            pages INTEGER,
            has_outline BOOLEAN,
            toc_source VARCHAR,               -- outline | headings | pages
            n_lines INTEGER,
            n_sections INTEGER,
            status VARCHAR NOT NULL,          -- ok | failed | missing
            error VARCHAR,
            parser_version VARCHAR,
            ingested_at TIMESTAMP NOT NULL
        );
        CREATE TABLE lines (
            run_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            line_no INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            bbox DOUBLE[] NOT NULL,
            font_size DOUBLE NOT NULL,
            bold BOOLEAN NOT NULL,
            block_no INTEGER NOT NULL,
            PRIMARY KEY (doc_id, line_no)
        );
        CREATE TABLE toc (
            run_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            section_id INTEGER NOT NULL,
            level INTEGER NOT NULL,
            title VARCHAR NOT NULL,
            page_start INTEGER NOT NULL,
            page_end INTEGER NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            parent_id INTEGER,
            source VARCHAR NOT NULL,
            PRIMARY KEY (doc_id, section_id)
        );
        CREATE TABLE questions (
            run_id VARCHAR NOT NULL,
            question_set VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            docs VARCHAR[],                   -- resolved absolute paths; NULL = whole corpus
            answer VARCHAR,
            gold_pages INTEGER[],             -- NULL = no page gold; [] = unanswerable
            labels JSON,
            keywords_primary VARCHAR[],
            keywords_secondary VARCHAR[],
            answer_shape VARCHAR,
            decomposition VARCHAR,
            intent VARCHAR,
            parser VARCHAR,
            detectors VARCHAR[],              -- detectors the dispatcher chose
            detector_rule VARCHAR,            -- why
            status VARCHAR NOT NULL,          -- loaded | detected | arbitrated | answered | failed
            error VARCHAR,
            PRIMARY KEY (run_id, question_id)
        );
        CREATE TABLE detector_hits (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            detector VARCHAR NOT NULL,
            rank INTEGER NOT NULL,
            raw_score DOUBLE NOT NULL,
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            section_id INTEGER,
            matched_keywords VARCHAR[]
        );
        CREATE TABLE candidates (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            candidate_id VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            section_id INTEGER,
            section VARCHAR,
            methods VARCHAR[],
            ranks JSON,
            raw_scores JSON,
            matched_keywords VARCHAR[],
            snippet VARCHAR,
            rrf_score DOUBLE NOT NULL,
            rrf_rank INTEGER NOT NULL,
            in_pool BOOLEAN NOT NULL,         -- handed to the arbiter (RRF pool cap)
            PRIMARY KEY (run_id, question_id, candidate_id)
        );
        CREATE TABLE verdicts (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            candidate_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            decision VARCHAR NOT NULL,
            reason VARCHAR NOT NULL,
            relevance DOUBLE NOT NULL,
            contradicts VARCHAR[],
            anchor_found BOOLEAN NOT NULL,
            rewrite VARCHAR,
            flagged BOOLEAN NOT NULL,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            call_id VARCHAR,
            PRIMARY KEY (run_id, question_id, candidate_id)
        );
        CREATE TABLE retrieval_results (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            status VARCHAR NOT NULL,          -- found | not_found | failed
            rule VARCHAR,
            result JSON,                      -- RetrievalResult
            arbiter_provider VARCHAR,
            arbiter_model VARCHAR,
            arbiter_call_id VARCHAR,
            error VARCHAR,
            PRIMARY KEY (run_id, question_id)
        );
        CREATE TABLE answers (
            run_id VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            regime VARCHAR NOT NULL,          -- batch | sequential
            routed BOOLEAN NOT NULL,          -- the regime the router chose (auto) for this question
            route_rule VARCHAR,
            exit VARCHAR,                     -- sufficiency | exhaustion | budget | single_call | not_found | failed
            steps INTEGER,
            value VARCHAR,
            answer JSON,                      -- AnswerWithEvidence
            answer_found BOOLEAN,
            complete_answer_found BOOLEAN,
            confidence DOUBLE,
            input_tokens BIGINT,
            cached_tokens BIGINT,
            output_tokens BIGINT,
            latency_ms DOUBLE,
            provider VARCHAR,
            model VARCHAR,
            budget JSON,
            status VARCHAR NOT NULL,          -- ok | failed
            error VARCHAR,
            PRIMARY KEY (run_id, question_id, regime)
        );
        CREATE TABLE llm_calls (
            call_id VARCHAR PRIMARY KEY,
            run_id VARCHAR NOT NULL,
            question_id VARCHAR,
            stage VARCHAR NOT NULL,           -- arbiter | generate
            regime VARCHAR,
            step INTEGER,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            request_hash VARCHAR NOT NULL,
            messages JSON,
            response VARCHAR,                 -- raw response text / body
            parsed JSON,
            input_tokens BIGINT,
            cached_tokens BIGINT,
            output_tokens BIGINT,
            reasoning_tokens BIGINT,
            tokens_counted BOOLEAN,           -- counted locally (offline provider) instead of reported
            latency_ms DOUBLE,
            status VARCHAR NOT NULL,          -- ok | error
            error VARCHAR,
            attempt INTEGER NOT NULL,
            batch_api BOOLEAN NOT NULL DEFAULT false,
            fallback_from VARCHAR,
            created_at TIMESTAMP NOT NULL
        );
        CREATE TABLE prices (
            price_version VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            effective_date DATE NOT NULL,
            input_per_mtok DOUBLE NOT NULL,
            cached_input_per_mtok DOUBLE NOT NULL,
            output_per_mtok DOUBLE NOT NULL,
            batch_input_per_mtok DOUBLE NOT NULL,
            batch_output_per_mtok DOUBLE NOT NULL,
            PRIMARY KEY (model, effective_date)
        );
        CREATE TABLE eval_results (
            run_id VARCHAR NOT NULL,
            question_set VARCHAR NOT NULL,
            question_id VARCHAR NOT NULL,
            method VARCHAR NOT NULL,          -- arbiter | rrf | keywords | embeddings | toc | batch | sequential | auto
            hit_at_1 BOOLEAN,
            hit_at_5 BOOLEAN,
            reciprocal_rank DOUBLE,
            predicted_pages INTEGER[],
            gold_pages INTEGER[],
            predicted_not_found BOOLEAN,
            unanswerable BOOLEAN,
            answer_correct BOOLEAN,
            input_tokens BIGINT,
            output_tokens BIGINT,
            labels JSON,
            PRIMARY KEY (run_id, question_id, method)
        );
        """
    )


@migration
def m002_prices_and_costs(con: duckdb.DuckDBPyConnection) -> None:
    """Cost views over ``llm_calls`` x ``prices`` (prices are data: edit warehouse/prices.csv, reload, re-query).

    - ``llm_calls.call_group``: one id shared by all attempts of one client call (retries, fallback);
      ``llm_calls.replay_of``: the call_id a replayed row was served from.
    - ``llm_token_cost(...)``: USD of one row's tokens: uncached input, cached input and output at their
      per-million prices; ``batch_api`` rows at batch prices (cached input at the lower of cached and batch input).
    - ``llm_call_costs``: every ``llm_calls`` row with the price in effect for its model on its date (the latest
      ``effective_date`` <= ``created_at``): ``cost_usd`` (NULL when the model has no price row) and
      ``reference_cost_usd`` (the same tokens priced at the ``reference`` row: what an offline run would cost
      if sent to that model).
    - ``llm_call_costs_at(price_model)``: the same rows, every call priced as if sent to ``price_model``.
    - ``llm_costs_by_run_stage``: per run, stage and regime: calls (client calls), attempts, failed (calls with
      no ok attempt), failed_attempts, replayed, token sums, cost_usd, unpriced_attempts, reference_cost_usd.
    """
    con.execute(
        """
        ALTER TABLE llm_calls ADD COLUMN call_group VARCHAR;
        ALTER TABLE llm_calls ADD COLUMN replay_of VARCHAR;

        CREATE MACRO llm_token_cost(input_tokens, cached_tokens, output_tokens, batch_api,
                                    input_per_mtok, cached_input_per_mtok, output_per_mtok,
                                    batch_input_per_mtok, batch_output_per_mtok) AS (
            greatest(coalesce(input_tokens, 0) - coalesce(cached_tokens, 0), 0)
                * CASE WHEN batch_api THEN batch_input_per_mtok ELSE input_per_mtok END
            + coalesce(cached_tokens, 0)
                * CASE WHEN batch_api THEN least(cached_input_per_mtok, batch_input_per_mtok)
                       ELSE cached_input_per_mtok END
            + coalesce(output_tokens, 0)
                * CASE WHEN batch_api THEN batch_output_per_mtok ELSE output_per_mtok END
        ) / 1e6;

        CREATE VIEW llm_call_costs AS
        SELECT c.call_id, c.call_group, c.run_id, c.question_id, c.stage, c.regime, c.step, c.provider, c.model,
               c.status, c.attempt, c.batch_api, c.fallback_from, c.replay_of, c.created_at,
               c.input_tokens, c.cached_tokens, c.output_tokens, c.reasoning_tokens, c.tokens_counted,
               c.latency_ms,
               p.price_version, p.effective_date AS price_effective_date,
               llm_token_cost(c.input_tokens, c.cached_tokens, c.output_tokens, c.batch_api,
                              p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok,
                              p.batch_input_per_mtok, p.batch_output_per_mtok) AS cost_usd,
               r.price_version AS reference_price_version,
               llm_token_cost(c.input_tokens, c.cached_tokens, c.output_tokens, c.batch_api,
                              r.input_per_mtok, r.cached_input_per_mtok, r.output_per_mtok,
                              r.batch_input_per_mtok, r.batch_output_per_mtok) AS reference_cost_usd
        FROM llm_calls c
        ASOF LEFT JOIN prices p
            ON c.model = p.model AND CAST(c.created_at AS DATE) >= p.effective_date
        ASOF LEFT JOIN (SELECT * FROM prices WHERE model = 'reference') r
            ON CAST(c.created_at AS DATE) >= r.effective_date;

        CREATE MACRO llm_call_costs_at(price_model) AS TABLE
        SELECT c.call_id, c.call_group, c.run_id, c.question_id, c.stage, c.regime, c.step, c.provider, c.model,
               c.status, c.attempt, c.batch_api, c.created_at,
               c.input_tokens, c.cached_tokens, c.output_tokens, c.reasoning_tokens, c.tokens_counted,
               p.model AS priced_as, p.price_version,
               llm_token_cost(c.input_tokens, c.cached_tokens, c.output_tokens, c.batch_api,
                              p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok,
                              p.batch_input_per_mtok, p.batch_output_per_mtok) AS cost_usd
        FROM llm_calls c
        ASOF LEFT JOIN (SELECT * FROM prices WHERE model = price_model) p
            ON CAST(c.created_at AS DATE) >= p.effective_date;

        CREATE VIEW llm_costs_by_run_stage AS
        SELECT run_id, stage, regime,
               count(DISTINCT coalesce(call_group, call_id)) AS calls,
               count(*) AS attempts,
               count(DISTINCT coalesce(call_group, call_id))
                 - count(DISTINCT CASE WHEN status = 'ok' THEN coalesce(call_group, call_id) END) AS failed,
               count(*) FILTER (WHERE status <> 'ok') AS failed_attempts,
               count(*) FILTER (WHERE replay_of IS NOT NULL) AS replayed,
               sum(coalesce(input_tokens, 0)) AS input_tokens,
               sum(coalesce(cached_tokens, 0)) AS cached_tokens,
               sum(coalesce(output_tokens, 0)) AS output_tokens,
               sum(coalesce(reasoning_tokens, 0)) AS reasoning_tokens,
               sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,
               sum(cost_usd) AS cost_usd,
               count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_attempts,
               sum(reference_cost_usd) AS reference_cost_usd
        FROM llm_call_costs
        GROUP BY run_id, stage, regime;
        """
    )


@migration
def m003_answers_and_regimes(con: duckdb.DuckDBPyConnection) -> None:
    """Answer columns for the regime comparison, and the cost views over answers (issue 5).

    New ``answers`` columns: ``answer_shape``, ``decomposition`` (copied from the parsed question, so the views need
    no join), ``value_norm`` (``tasks.generate.normalise.normalise_value``: equal forms = same answer), ``correct``
    (``answer_matches`` against the question set's reference answer; NULL when there is none), ``call_ids`` (the
    ``llm_calls`` rows that returned this answer's steps), ``created_at``, ``routed_regime`` (the regime ``auto``
    picks for the question, also on rows of the other regime).

    - ``answer_costs``: one row per answer with its spend. ``calls``/``attempts`` and ``cost_usd`` /
      ``reference_cost_usd`` are summed from ``llm_call_costs`` over every generate attempt of the answer's
      (run_id, question_id, regime), retries included; ``cost_usd`` is NULL when an attempt's model has no price
      row. An answer with no call rows is priced from its own token columns (``cost_basis`` says which).
      ``reference_cost_usd`` prices offline (extractive) tokens as if sent to the ``reference`` price row.
    - ``answer_costs_at(price_model)``: every answer's tokens priced as if sent to ``price_model``.
    - ``regime_comparison``: per (run_id, question_id) answered in both regimes: tokens, cost, latency, exit and
      steps of each, ``input_ratio`` (sequential / batch), ``values_agree`` (equal ``value_norm``), each side's
      ``correct``, and the ``auto_*`` figures of the regime the router picked.
    - ``regime_summary``: ``regime_comparison`` summed per run and answer_shape, plus an ``(all)`` row per run:
      token sums, ``seq_batch_input_ratio``, ``input_savings`` (1 - ratio), ``auto_batch_input_ratio``, costs,
      mean latencies, agreement, accuracy of batch / sequential / auto, and sequential exit counts.
    """
    con.execute(
        """
        ALTER TABLE answers ADD COLUMN answer_shape VARCHAR;
        ALTER TABLE answers ADD COLUMN decomposition VARCHAR;
        ALTER TABLE answers ADD COLUMN value_norm VARCHAR;
        ALTER TABLE answers ADD COLUMN correct BOOLEAN;
        ALTER TABLE answers ADD COLUMN call_ids VARCHAR[];
        ALTER TABLE answers ADD COLUMN created_at TIMESTAMP;
        ALTER TABLE answers ADD COLUMN routed_regime VARCHAR;

        CREATE VIEW answer_costs AS
        WITH calls AS (
            SELECT run_id, question_id, regime,
                   count(DISTINCT coalesce(call_group, call_id)) AS calls,
                   count(*) AS attempts,
                   count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_attempts,
                   sum(cost_usd) AS cost_usd,
                   sum(reference_cost_usd) AS reference_cost_usd
            FROM llm_call_costs
            WHERE stage = 'generate'
            GROUP BY run_id, question_id, regime
        ), priced AS (
            SELECT a.*,
                   llm_token_cost(a.input_tokens, a.cached_tokens, a.output_tokens, false,
                                  p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok,
                                  p.batch_input_per_mtok, p.batch_output_per_mtok) AS token_cost_usd,
                   llm_token_cost(a.input_tokens, a.cached_tokens, a.output_tokens, false,
                                  r.input_per_mtok, r.cached_input_per_mtok, r.output_per_mtok,
                                  r.batch_input_per_mtok, r.batch_output_per_mtok) AS token_reference_cost_usd
            FROM answers a
            ASOF LEFT JOIN prices p
                ON a.model = p.model AND CAST(coalesce(a.created_at, now()) AS DATE) >= p.effective_date
            ASOF LEFT JOIN (SELECT * FROM prices WHERE model = 'reference') r
                ON CAST(coalesce(a.created_at, now()) AS DATE) >= r.effective_date
        )
        SELECT a.run_id, a.question_id, a.regime, a.routed, a.route_rule, a.answer_shape, a.decomposition,
               a.exit, a.steps, a.status, a.error, a.provider, a.model, a.value, a.value_norm, a.answer_found,
               a.complete_answer_found, a.correct,
               coalesce(a.input_tokens, 0) AS input_tokens, coalesce(a.cached_tokens, 0) AS cached_tokens,
               coalesce(a.output_tokens, 0) AS output_tokens, a.latency_ms,
               coalesce(c.calls, 0) AS calls, coalesce(c.attempts, 0) AS attempts,
               CASE WHEN c.attempts IS NOT NULL THEN 'llm_calls'
                    WHEN coalesce(a.input_tokens, 0) + coalesce(a.output_tokens, 0) > 0 THEN 'answer_tokens'
                    ELSE 'no_call' END AS cost_basis,
               CASE WHEN c.attempts IS NOT NULL THEN (CASE WHEN c.unpriced_attempts = 0 THEN c.cost_usd END)
                    WHEN coalesce(a.input_tokens, 0) + coalesce(a.output_tokens, 0) > 0 THEN a.token_cost_usd
                    ELSE 0.0 END AS cost_usd,
               CASE WHEN c.attempts IS NOT NULL THEN c.reference_cost_usd
                    ELSE coalesce(a.token_reference_cost_usd, 0.0) END AS reference_cost_usd
        FROM priced a
        LEFT JOIN calls c USING (run_id, question_id, regime);

        CREATE MACRO answer_costs_at(price_model) AS TABLE
        SELECT a.run_id, a.question_id, a.regime, a.routed, a.answer_shape, a.exit, a.steps,
               a.input_tokens, a.cached_tokens, a.output_tokens, p.model AS priced_as, p.price_version,
               llm_token_cost(a.input_tokens, a.cached_tokens, a.output_tokens, false,
                              p.input_per_mtok, p.cached_input_per_mtok, p.output_per_mtok,
                              p.batch_input_per_mtok, p.batch_output_per_mtok) AS cost_usd
        FROM answers a
        ASOF LEFT JOIN (SELECT * FROM prices WHERE model = price_model) p
            ON CAST(coalesce(a.created_at, now()) AS DATE) >= p.effective_date;

        CREATE VIEW regime_comparison AS
        SELECT b.run_id, b.question_id, coalesce(b.answer_shape, s.answer_shape) AS answer_shape,
               coalesce(b.decomposition, s.decomposition) AS decomposition,
               CASE WHEN b.routed THEN 'batch' WHEN s.routed THEN 'sequential' END AS routed_regime,
               coalesce(b.route_rule, s.route_rule) AS route_rule,
               b.input_tokens AS batch_input_tokens, s.input_tokens AS seq_input_tokens,
               b.cached_tokens AS batch_cached_tokens, s.cached_tokens AS seq_cached_tokens,
               b.output_tokens AS batch_output_tokens, s.output_tokens AS seq_output_tokens,
               s.input_tokens / nullif(b.input_tokens, 0) AS input_ratio,
               b.cost_usd AS batch_cost_usd, s.cost_usd AS seq_cost_usd,
               b.reference_cost_usd AS batch_reference_cost_usd, s.reference_cost_usd AS seq_reference_cost_usd,
               b.latency_ms AS batch_latency_ms, s.latency_ms AS seq_latency_ms,
               b.exit AS batch_exit, s.exit AS seq_exit, b.steps AS batch_steps, s.steps AS seq_steps,
               b.status AS batch_status, s.status AS seq_status,
               b.value AS batch_value, s.value AS seq_value,
               CASE WHEN b.status = 'ok' AND s.status = 'ok'
                    THEN b.value_norm IS NOT DISTINCT FROM s.value_norm END AS values_agree,
               b.correct AS batch_correct, s.correct AS seq_correct,
               CASE WHEN b.routed THEN b.input_tokens ELSE s.input_tokens END AS auto_input_tokens,
               CASE WHEN b.routed THEN b.output_tokens ELSE s.output_tokens END AS auto_output_tokens,
               CASE WHEN b.routed THEN b.cost_usd ELSE s.cost_usd END AS auto_cost_usd,
               CASE WHEN b.routed THEN b.reference_cost_usd ELSE s.reference_cost_usd END AS auto_reference_cost_usd,
               CASE WHEN b.routed THEN b.correct ELSE s.correct END AS auto_correct
        FROM answer_costs b
        JOIN answer_costs s ON b.run_id = s.run_id AND b.question_id = s.question_id
        WHERE b.regime = 'batch' AND s.regime = 'sequential';

        CREATE VIEW regime_summary AS
        SELECT run_id,
               CASE WHEN grouping(answer_shape) = 1 THEN '(all)' ELSE coalesce(answer_shape, '(unknown)') END
                   AS answer_shape,
               count(*) AS questions,
               sum(batch_input_tokens) AS batch_input_tokens,
               sum(seq_input_tokens) AS seq_input_tokens,
               sum(auto_input_tokens) AS auto_input_tokens,
               sum(seq_input_tokens) / nullif(sum(batch_input_tokens), 0) AS seq_batch_input_ratio,
               1 - sum(seq_input_tokens) / nullif(sum(batch_input_tokens), 0) AS input_savings,
               sum(auto_input_tokens) / nullif(sum(batch_input_tokens), 0) AS auto_batch_input_ratio,
               sum(batch_output_tokens) AS batch_output_tokens,
               sum(seq_output_tokens) AS seq_output_tokens,
               sum(batch_cost_usd) AS batch_cost_usd, sum(seq_cost_usd) AS seq_cost_usd,
               sum(auto_cost_usd) AS auto_cost_usd,
               sum(batch_reference_cost_usd) AS batch_reference_cost_usd,
               sum(seq_reference_cost_usd) AS seq_reference_cost_usd,
               sum(auto_reference_cost_usd) AS auto_reference_cost_usd,
               avg(batch_latency_ms) AS batch_latency_ms, avg(seq_latency_ms) AS seq_latency_ms,
               avg(seq_steps) AS seq_mean_steps,
               avg(CAST(values_agree AS INTEGER)) AS agreement,
               avg(CAST(batch_correct AS INTEGER)) AS batch_accuracy,
               avg(CAST(seq_correct AS INTEGER)) AS seq_accuracy,
               avg(CAST(auto_correct AS INTEGER)) AS auto_accuracy,
               count(*) FILTER (WHERE seq_exit = 'sufficiency') AS seq_sufficiency,
               count(*) FILTER (WHERE seq_exit = 'exhaustion') AS seq_exhaustion,
               count(*) FILTER (WHERE seq_exit = 'budget') AS seq_budget,
               count(*) FILTER (WHERE batch_status = 'failed' OR seq_status = 'failed') AS failed
        FROM regime_comparison
        GROUP BY GROUPING SETS ((run_id, answer_shape), (run_id));
        """
    )


@migration
def m004_run_process(con: duckdb.DuckDBPyConnection) -> None:
    """Which process runs a run (host, pid): a 'running' run whose process is gone is shown 'interrupted'."""
    con.execute(
        """
        ALTER TABLE runs ADD COLUMN host VARCHAR;
        ALTER TABLE runs ADD COLUMN pid INTEGER;
        """
    )


@migration
def m005_eval_answer_found(con: duckdb.DuckDBPyConnection) -> None:
    """Whether an answer method gave a value (answer_found), so answer precision (correct / answered) and
    coverage (answered / answerable) are computed from eval_results alone."""
    con.execute("ALTER TABLE eval_results ADD COLUMN answer_found BOOLEAN;")


@migration
def m006_llm_server_reply(con: duckdb.DuckDBPyConnection) -> None:
    """What an OpenAI-compatible server was sent with and returned, per attempt (issue #18): the structured-output
    mode and token-limit parameter it accepted, the capability fallback a call made (so none is silent), and the
    server's own ``timings`` (llama.cpp: cache_n, prompt/predicted tokens and ms)."""
    con.execute(
        """
        ALTER TABLE llm_calls ADD COLUMN output_mode VARCHAR;
        ALTER TABLE llm_calls ADD COLUMN token_param VARCHAR;
        ALTER TABLE llm_calls ADD COLUMN capability_note VARCHAR;
        ALTER TABLE llm_calls ADD COLUMN server_timings JSON;
        """
    )


@migration
def m007_question_asked(con: duckdb.DuckDBPyConnection) -> None:
    """What a question asks, typed by the question brick (``schemas.contracts.Asked``: the reader's value class,
    unit, kind of name, quantity, multi-part), so generation reads it instead of typing the question again."""
    con.execute("ALTER TABLE questions ADD COLUMN asked JSON;")


@migration
def m009_document_identity(con: duckdb.DuckDBPyConnection) -> None:
    """What each document says it is (``schemas.contracts.DocumentIdentity`` as JSON: title, issuer or parties,
    type, period, fiscal year and quarter, fiscal-year end, date, each with the line it was read from), and on each
    candidate its document's identity and why detection searched that document first for the question (issue #27)."""
    con.execute(
        """
        ALTER TABLE documents ADD COLUMN identity JSON;
        ALTER TABLE candidates ADD COLUMN document VARCHAR;
        ALTER TABLE candidates ADD COLUMN preferred VARCHAR;
        ALTER TABLE candidates ADD COLUMN preferred_group INTEGER;
        """
    )


@migration
def m010_answer_rule(con: duckdb.DuckDBPyConnection) -> None:
    """Which reader rule produced each answer's value or abstention (``AnswerWithEvidence.rule``), on the answer
    row and on its eval row, so "how often did rule X answer, and how often was it right" is one query (issue #28)."""
    con.execute(
        """
        ALTER TABLE answers ADD COLUMN rule VARCHAR;
        ALTER TABLE eval_results ADD COLUMN rule VARCHAR;
        """
    )


@migration
def m011_keyword_postings(con: duckdb.DuckDBPyConnection) -> None:
    """An inverted index of the line windows' tokens, for corpus-wide keyword search without every document in
    memory (issue #29): which documents it holds and with what windows (``kw_docs``), each window's length
    (``kw_windows``) and each (term, window) with its count (``kw_postings``, the window's length beside it so that
    a query reads one table, and the term's rank among the window's distinct terms in reading order: BM25's floor
    of a negative idf sums every term's idf in the order the terms first occur). Filled per document by ``warehouse.keyword_postings``; an existing warehouse is
    filled on its first corpus-wide question."""
    con.execute(
        """
        CREATE TABLE kw_docs (doc_id VARCHAR PRIMARY KEY, window_lines INTEGER NOT NULL,
                              window_stride INTEGER NOT NULL, windows INTEGER NOT NULL);
        CREATE TABLE kw_windows (doc_id VARCHAR NOT NULL, win INTEGER NOT NULL, len INTEGER NOT NULL);
        CREATE TABLE kw_postings (term VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, win INTEGER NOT NULL,
                                  tf INTEGER NOT NULL, len INTEGER NOT NULL, pos INTEGER NOT NULL);
        CREATE TABLE kw_sorted (rows BIGINT NOT NULL);  -- postings rows in term order at the last rewrite
        """
    )


@migration
def m012_keyword_window_meta(con: duckdb.DuckDBPyConnection) -> None:
    """Each indexed window's place (first page, first and last line, section) beside its length, so that a
    corpus-wide keyword hit is anchored from the pages it falls on, not from its whole document loaded (issue #29).
    The windows indexed before it have no place: the index is emptied, and the next ingest (or the first
    corpus-wide question) indexes every document again."""
    con.execute(
        """
        ALTER TABLE kw_windows ADD COLUMN IF NOT EXISTS page INTEGER;
        ALTER TABLE kw_windows ADD COLUMN IF NOT EXISTS line_start INTEGER;
        ALTER TABLE kw_windows ADD COLUMN IF NOT EXISTS line_end INTEGER;
        ALTER TABLE kw_windows ADD COLUMN IF NOT EXISTS section_id INTEGER;
        DELETE FROM kw_postings;
        DELETE FROM kw_windows;
        DELETE FROM kw_docs;
        DELETE FROM kw_sorted;
        """
    )
