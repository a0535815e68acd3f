/** @module Traffic forecasting: forecasters, backtest and selection, service, routes. */
export * from "./backtest.ts";
export * from "./forecast_routes.ts";
export * from "./forecast_series.ts";
export * from "./forecast_service.ts";
export * from "./forecaster.ts";
export * from "./forecasters.ts";
export * from "./holt.ts";
export * from "./holt_winters.ts";
export * from "./last_value.ts";
export * from "./seasonal_naive.ts";
export * from "./seasonal_shift.ts";
export * from "./synthetic_trace.ts";
