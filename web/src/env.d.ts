// The bundler turns CSS imports into one stylesheet beside the script.
declare module '*.css';
