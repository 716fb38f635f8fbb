declare module "*.sql" {
  const text: string;
  export default text;
}

declare module "*.c" {
  const text: string;
  export default text;
}

declare module "*.h" {
  const text: string;
  export default text;
}

declare module "*.f90" {
  const text: string;
  export default text;
}
