//! Spans (with the cargo feature `otel`): one per request and one per
//! listen stream, named and attributed by the OpenTelemetry MCP semantic
//! conventions, exported through OTLP once `otel::install`
//! has set up a tracer. Without the feature, or without a tracer, these are
//! empty and cost nothing.
//!
//! A request's span is a child of the caller's `traceparent` (from `_meta`
//! or the HTTP header) and becomes the parent of what the handler sends on:
//! [`RequestSpan::downstream`] is the trace context the handler's
//! notifications carry.

use mcp_protocol::request::ClientRequest;
use mcp_protocol::trace::TraceContext;
use mcp_protocol::RequestId;

use super::Outcome;

/// How the request arrived (`network.transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetworkTransport {
    /// Streamable HTTP.
    Tcp,
    /// stdio.
    Pipe,
}

impl NetworkTransport {
    /// The transport of a request that came with headers (HTTP) or
    /// without (stdio and other message streams).
    pub fn with_headers(headers: bool) -> Self {
        if headers {
            NetworkTransport::Tcp
        } else {
            NetworkTransport::Pipe
        }
    }
}

/// A request's span (empty when not traced).
#[derive(Default)]
pub struct RequestSpan {
    #[cfg(feature = "otel")]
    inner: Option<opentelemetry_sdk::trace::Span>,
}

/// A listen stream's span (empty when not traced).
#[derive(Default)]
pub struct StreamSpan {
    #[cfg(feature = "otel")]
    inner: Option<opentelemetry_sdk::trace::Span>,
}

#[cfg(not(feature = "otel"))]
impl RequestSpan {
    /// Starts the span of `request` (nothing without the `otel` feature).
    pub fn start(
        _request: &ClientRequest,
        _id: &RequestId,
        _version: &'static str,
        _transport: NetworkTransport,
        _parent: Option<&TraceContext>,
    ) -> Self {
        RequestSpan {}
    }

    /// The trace context for what the request causes: its span as parent.
    pub fn downstream(&self, _parent: Option<&TraceContext>) -> Option<TraceContext> {
        None
    }

    /// Ends the span with `outcome`.
    pub fn end(&mut self, _outcome: Outcome) {}
}

#[cfg(not(feature = "otel"))]
impl StreamSpan {
    /// Starts the span of a listen stream.
    pub fn start(_subscription: &RequestId, _version: Option<&'static str>) -> Self {
        StreamSpan {}
    }

    /// Ends it, recording why it closed.
    pub fn end(&mut self, _reason: &'static str) {}
}

#[cfg(feature = "otel")]
mod traced {
    use mcp_protocol::request::ItemKind;
    use opentelemetry::trace::{
        Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId, TraceState,
        Tracer as _,
    };
    use opentelemetry::{Context, KeyValue};

    use super::*;

    /// `jsonrpc.request.id`: a string id as its text, a number as digits.
    fn id_text(id: &RequestId) -> String {
        if id.is_string() {
            serde_json::from_str::<String>(id.as_json()).unwrap_or_else(|_| id.as_json().to_owned())
        } else {
            id.as_json().to_owned()
        }
    }

    /// The remote parent a caller's trace context names.
    fn parent_context(parent: Option<&TraceContext>) -> Context {
        let Some(p) = parent else { return Context::new() };
        let (Ok(trace), Ok(span)) = (TraceId::from_hex(p.trace_id()), SpanId::from_hex(p.parent_id())) else {
            return Context::new();
        };
        let flags = if p.sampled() { TraceFlags::SAMPLED } else { TraceFlags::default() };
        let state = p.tracestate.as_deref().and_then(|s| s.parse::<TraceState>().ok()).unwrap_or_default();
        Context::new().with_remote_span_context(SpanContext::new(trace, span, flags, true, state))
    }

    /// The span name (`{mcp.method.name} {target}`) and the attributes
    /// the conventions give `request`.
    fn describe(request: &ClientRequest, attrs: &mut Vec<KeyValue>) -> String {
        let method = request.method();
        match request.item() {
            Some((ItemKind::Tool, name)) => {
                attrs.push(KeyValue::new("gen_ai.tool.name", name.to_owned()));
                attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                format!("{method} {name}")
            }
            Some((ItemKind::Prompt, name)) => {
                attrs.push(KeyValue::new("gen_ai.prompt.name", name.to_owned()));
                format!("{method} {name}")
            }
            Some((ItemKind::Resource, uri)) => {
                // Not in the name: URIs are not low-cardinality.
                attrs.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
                method.to_owned()
            }
            Some(_) | None => method.to_owned(),
        }
    }

    impl RequestSpan {
        /// Starts the span of `request`, a child of `parent` (none when no
        /// tracer is installed).
        pub fn start(
            request: &ClientRequest,
            id: &RequestId,
            version: &'static str,
            transport: NetworkTransport,
            parent: Option<&TraceContext>,
        ) -> Self {
            let Some(tracer) = super::super::otel::tracer() else { return RequestSpan { inner: None } };
            let mut attrs = vec![
                KeyValue::new("mcp.method.name", request.method()),
                KeyValue::new("mcp.protocol.version", version),
                KeyValue::new("jsonrpc.request.id", id_text(id)),
                KeyValue::new(
                    "network.transport",
                    match transport {
                        NetworkTransport::Tcp => "tcp",
                        NetworkTransport::Pipe => "pipe",
                    },
                ),
            ];
            let name = describe(request, &mut attrs);
            let span = tracer
                .span_builder(name)
                .with_kind(SpanKind::Server)
                .with_attributes(attrs)
                .start_with_context(tracer, &parent_context(parent));
            RequestSpan { inner: Some(span) }
        }

        /// The trace context for what the request causes: the caller's
        /// trace, with this span as the parent (or `None` untraced).
        pub fn downstream(&self, parent: Option<&TraceContext>) -> Option<TraceContext> {
            let span = self.inner.as_ref()?;
            let sc = span.span_context();
            if !sc.is_valid() {
                return None;
            }
            let traceparent = format!("00-{:032x}-{:016x}-{:02x}", sc.trace_id(), sc.span_id(), sc.trace_flags());
            TraceContext::from_parts(
                Some(&traceparent),
                parent.and_then(|p| p.tracestate.as_deref()),
                parent.and_then(|p| p.baggage.as_deref()),
            )
        }

        /// Ends the span with `outcome`: an error code, a cancellation or
        /// a timeout set `error.type` and an error status.
        pub fn end(&mut self, outcome: Outcome) {
            let Some(mut span) = self.inner.take() else { return };
            if let Some(code) = outcome.status_code() {
                span.set_attribute(KeyValue::new("rpc.response.status_code", code));
            }
            if let Some(error) = outcome.error_type() {
                span.set_attribute(KeyValue::new("error.type", error));
                span.set_status(Status::error(error));
            }
            span.end();
        }
    }

    impl StreamSpan {
        /// Starts the span of the listen stream of `subscription`.
        pub fn start(subscription: &RequestId, version: Option<&'static str>) -> Self {
            let Some(tracer) = super::super::otel::tracer() else { return StreamSpan { inner: None } };
            let mut attributes = vec![
                KeyValue::new("mcp.method.name", "subscriptions/listen"),
                KeyValue::new("jsonrpc.request.id", id_text(subscription)),
            ];
            if let Some(version) = version {
                attributes.push(KeyValue::new("mcp.protocol.version", version));
            }
            let span = tracer
                .span_builder("subscriptions/listen")
                .with_kind(SpanKind::Server)
                .with_attributes(attributes)
                .start(tracer);
            StreamSpan { inner: Some(span) }
        }

        /// Ends it, recording why it closed (`mcp.subscription.close_reason`).
        pub fn end(&mut self, reason: &'static str) {
            if let Some(mut span) = self.inner.take() {
                span.set_attribute(KeyValue::new("mcp.subscription.close_reason", reason));
                span.end();
            }
        }
    }
}
