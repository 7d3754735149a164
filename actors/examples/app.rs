//! A tool with a view (MCP Apps): hosts that render views show `sales` as a
//! bar chart; other clients get the same figures as text.
use actix_mcp::prelude::*;

/// Monthly sales of a region.
#[derive(Deserialize, JsonSchema)]
struct Region {
    /// `north` or `south`.
    region: String,
}

const CHART: &str = r#"<h3 id="title">Sales</h3><svg id="chart" width="360" height="160"></svg>
<script>
  mcpApp.onToolResult(({ structuredContent: s }) => {
    title.textContent = `Sales, ${s.region}`;
    const top = Math.max(...s.months.map((m) => m.value));
    chart.innerHTML = s.months.map((m, i) => `<rect x="${i * 30}" y="${150 - (m.value / top) * 140}"
      width="24" height="${(m.value / top) * 140}" fill="steelblue"><title>${m.month}: ${m.value}</title></rect>`).join("");
  });
  mcpApp.connect();
</script>"#;

/// The server, for `main` and the tests.
pub fn server() -> McpServerBuilder {
    let sales = |r: Region, _ctx| async move {
        let base = if r.region == "north" { 40.0 } else { 25.0 };
        let months: Vec<(&str, f64)> = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"]
            .into_iter()
            .zip((0..).map(|i| base + 7.0 * f64::from(i)))
            .collect();
        let text = months.iter().map(|(m, v)| format!("{m}: {v}")).collect::<Vec<_>>().join(", ");
        let data: Vec<_> = months.iter().map(|(m, v)| json!({"month": m, "value": v})).collect();
        Ok(CallToolResult::text(text).with_structured(json!({"region": r.region, "months": data})))
    };
    McpServer::builder(server_info!())
        .view(View::page("ui://sales/chart", "Sales chart", "Sales", CHART))
        .tool(Tool::new("sales", "", sales).with_view("ui://sales/chart"))
}

fn main() -> Result<(), BuildError> {
    server().run()
}
